/*
** A test double for libovl.so where `ovl run` only needs something to preload (`--lib`): a
** library that does nothing, so that the command runs as it would alone and the loader has
** nothing to say (test_cli's run checks: what ovl run itself prints and returns).
*/
int ovl_fake_noop_preload_marker;
