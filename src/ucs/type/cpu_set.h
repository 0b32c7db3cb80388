/*
 * A fixed-size set of CPU numbers, independent of glibc's cpu_set_t.
 */
#ifndef UCS_TYPE_CPU_SET_H_
#define UCS_TYPE_CPU_SET_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

#define UCS_CPU_SETSIZE 1024

typedef unsigned long ucs_cpu_mask_t;

#define UCS_NCPUBITS    (8 * sizeof(ucs_cpu_mask_t))

typedef struct {
    ucs_cpu_mask_t ucs_bits[UCS_CPU_SETSIZE / UCS_NCPUBITS];
} ucs_cpu_set_t;

static inline void ucs_cpu_zero(ucs_cpu_set_t *set)
{
    unsigned i;

    for (i = 0; i < UCS_CPU_SETSIZE / UCS_NCPUBITS; ++i) {
        set->ucs_bits[i] = 0;
    }
}

/** Add @a cpu to @a set; CPUs beyond UCS_CPU_SETSIZE are ignored. */
static inline void ucs_cpu_set(unsigned cpu, ucs_cpu_set_t *set)
{
    if (cpu < UCS_CPU_SETSIZE) {
        set->ucs_bits[cpu / UCS_NCPUBITS] |= 1ul << (cpu % UCS_NCPUBITS);
    }
}

/** Remove @a cpu from @a set */
static inline void ucs_cpu_clr(unsigned cpu, ucs_cpu_set_t *set)
{
    if (cpu < UCS_CPU_SETSIZE) {
        set->ucs_bits[cpu / UCS_NCPUBITS] &= ~(1ul << (cpu % UCS_NCPUBITS));
    }
}

static inline int ucs_cpu_is_set(unsigned cpu, const ucs_cpu_set_t *set)
{
    return (cpu < UCS_CPU_SETSIZE) &&
           ((set->ucs_bits[cpu / UCS_NCPUBITS] >> (cpu % UCS_NCPUBITS)) & 1);
}

/* The glibc-style spellings */
#define UCS_CPU_ZERO(_set)          ucs_cpu_zero(_set)
#define UCS_CPU_SET(_cpu, _set)     ucs_cpu_set(_cpu, _set)
#define UCS_CPU_CLR(_cpu, _set)     ucs_cpu_clr(_cpu, _set)
#define UCS_CPU_ISSET(_cpu, _set)   ucs_cpu_is_set(_cpu, _set)

END_C_DECLS

#endif
