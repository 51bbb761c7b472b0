/*
** Collective ids, and the external correlation ids that link them to GPU work.
**
** The NCCL hooks push an external correlation id around each call; CUPTI then reports an
** ExternalCorrelation record pairing that id with the correlation id of every CUDA launch
** made meanwhile, and the writer turns each pair into collective_launches rows.
**
**  * A call outside any group gets the next id of a process-wide counter (1, 2, ...) and
**    pushes that id itself: one link.
**  * Calls inside ncclGroupStart/End launch nothing; NCCL launches their fused work in the
**    outermost ncclGroupEnd. Group G's k-th call gets the id GROUP_BASE + G * 2^20 + k, and
**    ncclGroupEnd pushes EXT_GROUP_FLAG | G << 20 | K (K calls): the writer expands it to K
**    links without remembering any group, whatever order events and records arrive in.
** Groups of more than 2^20 - 1 calls link only their first 2^20 - 1 calls.
*/
#ifndef OVL_INJECT_COLLECTIVE_IDS_H
#define OVL_INJECT_COLLECTIVE_IDS_H

#include <stdint.h>

#define OVL_GROUP_MEMBER_BITS 20
#define OVL_GROUP_MAX_MEMBERS ((1u << OVL_GROUP_MEMBER_BITS) - 1)
#define OVL_GROUP_ID_BITS 41
#define OVL_GROUP_ID_MASK ((UINT64_C(1) << OVL_GROUP_ID_BITS) - 1)
#define OVL_COLL_GROUP_BASE (INT64_C(1) << 62)
#define OVL_EXT_GROUP_FLAG (UINT64_C(1) << 63)

/* Id of the k-th call (from 0) of group g (from 1). */
static inline int64_t ovl_group_member_id(uint64_t g, uint32_t k) {
  return OVL_COLL_GROUP_BASE + (int64_t)((g & OVL_GROUP_ID_MASK) << OVL_GROUP_MEMBER_BITS) + (int64_t)k;
}

/* The group g of a member's id ovl_group_member_id(g, k) (an id >= OVL_COLL_GROUP_BASE). */
static inline int64_t ovl_member_group(int64_t id) {
  return (int64_t)(((uint64_t)(id - OVL_COLL_GROUP_BASE) >> OVL_GROUP_MEMBER_BITS) & OVL_GROUP_ID_MASK);
}

/* External correlation id pushed by the ncclGroupEnd of group g with `members` calls. */
static inline uint64_t ovl_group_ext_id(uint64_t g, uint32_t members) {
  if (members > OVL_GROUP_MAX_MEMBERS) members = OVL_GROUP_MAX_MEMBERS;
  return OVL_EXT_GROUP_FLAG | (g & OVL_GROUP_ID_MASK) << OVL_GROUP_MEMBER_BITS | members;
}

static inline int ovl_ext_is_group(uint64_t ext) { return (ext & OVL_EXT_GROUP_FLAG) != 0; }
static inline uint64_t ovl_ext_group(uint64_t ext) { return (ext >> OVL_GROUP_MEMBER_BITS) & OVL_GROUP_ID_MASK; }
static inline uint32_t ovl_ext_members(uint64_t ext) { return (uint32_t)(ext & OVL_GROUP_MAX_MEMBERS); }

#endif
