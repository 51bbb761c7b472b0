/*
** Symbol look-up in the loaded objects' own tables: see symbol_lookup.h.
**
** Every object's PT_DYNAMIC gives its symbol table, string table and GNU (or SysV) hash
** table; a name is looked up the way the dynamic linker does, without symbol versions.
** glibc rewrites the hash/table addresses of a loaded object to absolute ones, except in
** read-only dynamic sections (the vDSO): an address below the load base is taken as
** relative to it.
*/
#define _GNU_SOURCE
#include "symbol_lookup.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#define NO_SANITIZE __attribute__((no_sanitize_address, no_sanitize_undefined))

typedef struct query {
  const char *name;
  int type;  /* STT_FUNC or STT_OBJECT */
  int before_self;  /* look only in objects loaded before libovl */
  uint32_t gnu, sysv;
  void *found;
} query;

NO_SANITIZE static uint32_t gnu_hash(const char *s) {
  uint32_t h = 5381;
  for (; *s; s++) h = h * 33 + (unsigned char)*s;
  return h;
}

NO_SANITIZE static uint32_t sysv_hash(const char *s) {
  uint32_t h = 0;
  for (; *s; s++) {
    h = (h << 4) + (unsigned char)*s;
    uint32_t g = h & 0xf0000000u;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

NO_SANITIZE static int same_name(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return *a == *b;
}

/* A defined, exported function (or object) of this name (libovl's own exports are indirect
** functions, and its object is skipped anyway). */
NO_SANITIZE static int is_definition(const ElfW(Sym) *s, const char *strtab, const query *q) {
  int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);  /* same in both classes */
  return s->st_shndx != SHN_UNDEF && s->st_value != 0 && type == q->type &&
         (bind == STB_GLOBAL || bind == STB_WEAK) && same_name(strtab + s->st_name, q->name);
}

NO_SANITIZE static const ElfW(Sym) *gnu_lookup(const uint32_t *table, const ElfW(Sym) *symtab, const char *strtab,
                                               const query *q) {
  uint32_t nbuckets = table[0], symoffset = table[1], bloom_size = table[2], shift = table[3];
  if (!nbuckets || !bloom_size) return NULL;
  const ElfW(Addr) *bloom = (const ElfW(Addr) *)(table + 4);
  const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size), *chain = buckets + nbuckets;
  enum { BITS = sizeof(ElfW(Addr)) * 8 };
  ElfW(Addr) word = bloom[(q->gnu / BITS) % bloom_size];
  ElfW(Addr) mask = ((ElfW(Addr))1 << (q->gnu % BITS)) | ((ElfW(Addr))1 << ((q->gnu >> shift) % BITS));
  if ((word & mask) != mask) return NULL;
  uint32_t i = buckets[q->gnu % nbuckets];
  if (i < symoffset) return NULL;
  for (;; i++) {
    uint32_t h = chain[i - symoffset];
    if ((h | 1) == (q->gnu | 1) && is_definition(&symtab[i], strtab, q)) return &symtab[i];
    if (h & 1) return NULL;
  }
}

NO_SANITIZE static const ElfW(Sym) *sysv_lookup(const uint32_t *table, const ElfW(Sym) *symtab, const char *strtab,
                                                const query *q) {
  uint32_t nbucket = table[0];
  if (!nbucket) return NULL;
  const uint32_t *bucket = table + 2, *chain = bucket + nbucket;
  for (uint32_t i = bucket[q->sysv % nbucket]; i != STN_UNDEF; i = chain[i])
    if (is_definition(&symtab[i], strtab, q)) return &symtab[i];
  return NULL;
}

/* Whether this object holds libovl's own code. */
NO_SANITIZE static int is_self(const struct dl_phdr_info *info) {
  uintptr_t here = (uintptr_t)&is_self;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD && here >= start && here - start < p->p_memsz) return 1;
  }
  return 0;
}

NO_SANITIZE static int visit(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  query *q = arg;
  const ElfW(Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (is_self(info)) return q->before_self;  /* nonzero ends the walk, found nothing */
  if (!dyn) return 0;
  uintptr_t symtab = 0, strtab = 0, gnu = 0, sysv = 0;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t v = dyn->d_un.d_ptr;
    if (v && v < info->dlpi_addr) v += info->dlpi_addr;  /* left relative (read-only .dynamic) */
    if (dyn->d_tag == DT_SYMTAB) symtab = v;
    else if (dyn->d_tag == DT_STRTAB) strtab = v;
    else if (dyn->d_tag == DT_GNU_HASH) gnu = v;
    else if (dyn->d_tag == DT_HASH) sysv = v;
  }
  if (!symtab || !strtab || (!gnu && !sysv)) return 0;
  const ElfW(Sym) *s = gnu ? gnu_lookup((const uint32_t *)gnu, (const ElfW(Sym) *)symtab, (const char *)strtab, q)
                           : sysv_lookup((const uint32_t *)sysv, (const ElfW(Sym) *)symtab, (const char *)strtab, q);
  if (!s) return 0;
  q->found = (void *)(info->dlpi_addr + s->st_value);
  return 1;
}

/* Holds its own address only once relocated. */
static void *const relocated_self = (void *)&relocated_self;
NO_SANITIZE int ovl_self_relocated(void) {
  return *(void *const volatile *)&relocated_self == (void *)&relocated_self;
}

NO_SANITIZE static void *lookup(const char *name, int type, int before_self) {
  query q = {name, type, before_self, gnu_hash(name), sysv_hash(name), NULL};
  dl_iterate_phdr(visit, &q);
  return q.found;
}

NO_SANITIZE void *ovl_symbol_lookup(const char *name) { return lookup(name, STT_FUNC, 0); }

void *ovl_symbol_lookup_data_before_self(const char *name) { return lookup(name, STT_OBJECT, 1); }

void *ovl_find_real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  return f ? f : ovl_symbol_lookup(name);
}

void ovl_say_undefined(const char *name) { (void)dlsym(RTLD_NEXT, name); }
