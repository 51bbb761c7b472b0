/* common/base/strmap: values by text, and interned copies that stay put while the map grows. */
#include "base/strmap.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  ovl_strmap m = {0};
  int64_t v = -1;
  CHECK(!ovl_strmap_get(&m, "AllReduce", &v));  /* empty: nothing, no table needed */
  const char *first = ovl_strmap_intern(&m, "AllReduce");
  CHECK(first != NULL && strcmp(first, "AllReduce") == 0);
  char again[16];
  snprintf(again, sizeof again, "%s", "AllReduce");
  CHECK(ovl_strmap_intern(&m, again) == first);  /* equal text: the same copy */
  CHECK(first != again);
  CHECK(ovl_strmap_get(&m, "AllReduce", &v) && v == 0);
  CHECK(ovl_strmap_put(&m, "AllReduce", 7) == 0);
  CHECK(ovl_strmap_intern(&m, "AllReduce") == first);  /* the value does not change the copy */
  CHECK(ovl_strmap_get(&m, "AllReduce", &v) && v == 7);
  const char *empty = ovl_strmap_intern(&m, "");
  CHECK(empty != NULL && empty[0] == 0);
  /* many more texts: the table grows several times, the copies handed out stay */
  const char *kept[1000];
  for (int i = 0; i < 1000; i++) {
    char key[32];
    snprintf(key, sizeof key, "op%d", i);
    kept[i] = ovl_strmap_intern(&m, key);
    CHECK(kept[i] != NULL);
  }
  CHECK(ovl_strmap_intern(&m, "AllReduce") == first);
  CHECK(ovl_strmap_intern(&m, "") == empty);
  for (int i = 0; i < 1000; i++) {
    char key[32];
    snprintf(key, sizeof key, "op%d", i);
    CHECK(ovl_strmap_intern(&m, key) == kept[i]);
    CHECK(strcmp(kept[i], key) == 0);
  }
  CHECK_I64(m.len, 1002);
  ovl_strmap_free(&m);
  CHECK(!ovl_strmap_get(&m, "AllReduce", &v));
  return check_summary();
}
