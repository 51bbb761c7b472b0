# Assertions for the shell tests (sourced): `check DESCRIPTION COMMAND...` prints ok/FAIL and
# counts failures in $fails; `has FILE TEXT` / `lacks FILE TEXT` search a file whose lines and
# runs of spaces are joined first (cmake wraps long messages).
fails=0
check() {  # check DESCRIPTION COMMAND...
  what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
has() { tr -s '\n ' '  ' < "$1" | grep -q -- "$2"; }
lacks() { ! has "$1" "$2"; }
