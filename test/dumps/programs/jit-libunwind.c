/* jit-libunwind: JIT code known only through libunwind's dynamic registration
 * (_U_dyn_register / _U_dyn_info_list), once per unwind-info format.
 *
 * The program maps one anonymous RWX page at a fixed address (JIT_PAGE, MAP_FIXED_NOREPLACE)
 * and writes hand-assembled x86-64 code into it:
 *
 *   G1 at page+0x000 (16 bytes), called as G1(data, callback):
 *     +0  53            push rbx
 *     +1  48 83 ec 10   sub  rsp, 16
 *     +5  48 89 fb      mov  rbx, rdi
 *     +8  ff d6         call rsi            (return address page+0x00a)
 *     +10 48 83 c4 10   add  rsp, 16
 *     +14 5b            pop  rbx
 *     +15 c3            ret
 *
 *   G2 at page+0x040 (20 bytes), called as G2(data, callback):
 *     +0  55            push rbp
 *     +1  48 89 e5      mov  rbp, rsp
 *     +4  41 54         push r12
 *     +6  48 83 ec 18   sub  rsp, 24
 *     +10 ff d6         call rsi            (return address page+0x04c)
 *     +12 48 83 c4 18   add  rsp, 24
 *     +16 41 5c         pop  r12
 *     +18 5d            pop  rbp
 *     +19 c3            ret
 *
 * G1 is registered with format UNW_INFO_FORMAT_TABLE: a CIE + FDE (.eh_frame format, at
 * page+0x200) describing G1 exactly, and a one-entry binary-search table at page+0x300
 * ({int32 start_ip - segbase, int32 fde - segbase}, segbase = the page). G2 is registered
 * with format UNW_INFO_FORMAT_DYNAMIC (proc-info): name "jit_frame_fn" (page+0x100) and
 * three regions (page+0x400...): the prologue (insn_count 10 bytes, seven ops in a shuffled
 * order: the stack pointer adjustments, rbp spilled sp-relative, rsp saved in rbp, r12
 * spilled fp-relative, stop), the body (2 bytes, the call; just a stop op) and the
 * epilogue (insn_count -8: the last 8 bytes of the procedure; just a stop op). `when` and
 * insn_count count BYTES (x86-64 has no instruction slots): `when` is the offset of the end
 * of the instruction the op describes, within its region.
 *
 * Thread T: t_thread -> G1 -> t_callback, which records its stack with libunwind's
 * unw_backtrace() (which must unwind G1 through the registered table; checked: a unw_step
 * walk finds G1's procedure info with format UNW_INFO_FORMAT_TABLE, and the addresses
 * beyond G1 agree with glibc's backtrace() taken in t_thread before the call), then blocks
 * in read(). Thread P: p_thread -> G2 -> p_callback, which records its stack by following
 * the frame-pointer chain (p_thread and p_callback keep frame pointers; G2 does too) plus
 * glibc's backtrace() from p_thread for the frames outside, then blocks in read(). The main
 * thread blocks in pthread_join.
 *
 * stdout, for make-dumps.sh (copied into dumps.json):
 *   JITLU page P size N G1 a b G2 a b eh_frame E table X name S list L info_T I info_P J regions R
 *   STACK T|P tid a...   that thread's return addresses, innermost first (the callback's
 *                        into G1/G2, G1's/G2's into t_thread/p_thread, then into
 *                        start_thread and clone3)
 *   SLOTS T|P tid s...   the stack address holding each of them
 *   READY T|P tid        that thread is about to block
 *   READY                (sw_ready) every other thread is asleep
 */
#include "common.h"

#define UNW_LOCAL_ONLY
#include <execinfo.h>
#include <libunwind.h>
#include <stdint.h>
#include <sys/mman.h>

#define NOINLINE __attribute__((noinline, noclone))
#define KEEPFP __attribute__((optimize("no-omit-frame-pointer")))
#define MAXFRAMES 32

#define JIT_PAGE 0x7e1000000000UL
#define G1_OFF 0x000
#define G2_OFF 0x040
#define NAME_OFF 0x100
#define EH_OFF 0x200
#define TABLE_OFF 0x300
#define REGION_OFF 0x400

typedef long (*jit_fn)(void *data, long (*cb)(void *));

static const unsigned char g1_code[] = {
    0x53,                   /* push rbx */
    0x48, 0x83, 0xec, 0x10, /* sub rsp, 16 */
    0x48, 0x89, 0xfb,       /* mov rbx, rdi */
    0xff, 0xd6,             /* call rsi */
    0x48, 0x83, 0xc4, 0x10, /* add rsp, 16 */
    0x5b,                   /* pop rbx */
    0xc3,                   /* ret */
};
static const unsigned char g2_code[] = {
    0x55,                   /* push rbp */
    0x48, 0x89, 0xe5,       /* mov rbp, rsp */
    0x41, 0x54,             /* push r12 */
    0x48, 0x83, 0xec, 0x18, /* sub rsp, 24 */
    0xff, 0xd6,             /* call rsi */
    0x48, 0x83, 0xc4, 0x18, /* add rsp, 24 */
    0x41, 0x5c,             /* pop r12 */
    0x5d,                   /* pop rbp */
    0xc3,                   /* ret */
};
#define G2_PROLOGUE 10 /* bytes up to and including sub rsp, 24 */
#define G2_BODY 2      /* call rsi */
#define G2_EPILOGUE 8  /* add rsp, 24; pop r12; pop rbp; ret */

/* The registrations (in .bss: _U_dyn_info_list.first -> info_P -> info_T). */
unw_dyn_info_t jit_dyn_info_T, jit_dyn_info_P;
extern unw_dyn_info_list_t *_U_dyn_info_list_addr(void);

static unsigned char *page;
static jit_fn g1, g2;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int flag;
static volatile long sink;
static int t_pi_format = -1; /* unw_proc_info_t.format libunwind reported for G1 */

struct rec {
    char kind;                 /* 'T' or 'P' */
    void *outer[MAXFRAMES];    /* the thread function's return address and beyond (glibc) */
    int nouter;
    void *frames[MAXFRAMES];   /* the record: callback's return address outwards */
    uintptr_t slots[MAXFRAMES];
    int n;
};

/* ---- the .eh_frame CIE + FDE for G1 ---- */
static unsigned char *put_uleb(unsigned char *p, unsigned v)
{
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        *p++ = b | (v ? 0x80 : 0);
    } while (v);
    return p;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Writes CIE + FDE + terminator at eh; returns the FDE's address. */
static unsigned char *write_eh_frame(unsigned char *eh, uintptr_t fn, unsigned len)
{
    unsigned char *p = eh + 4, *cie = eh, *fde;
    put32(p, 0), p += 4;        /* CIE id */
    *p++ = 1;                   /* version */
    memcpy(p, "zR", 3), p += 3; /* augmentation */
    p = put_uleb(p, 1);         /* code alignment */
    *p++ = 0x78;                /* data alignment -8 (sleb) */
    *p++ = 16;                  /* return address column (rip) */
    p = put_uleb(p, 1);         /* augmentation data length */
    *p++ = 0x1b;                /* FDE pointer encoding: DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
    *p++ = 0x0c, *p++ = 7, *p++ = 8; /* DW_CFA_def_cfa rsp, 8 */
    *p++ = 0x90, *p++ = 1;           /* DW_CFA_offset rip, cfa-8 */
    while ((p - cie) % 8)
        *p++ = 0; /* DW_CFA_nop */
    put32(cie, (uint32_t)(p - cie - 4));

    fde = p;
    p += 4;
    put32(p, (uint32_t)(p - cie)), p += 4;                  /* CIE pointer */
    put32(p, (uint32_t)(int32_t)(fn - (uintptr_t)p)), p += 4; /* pc begin (pcrel) */
    put32(p, len), p += 4;                                  /* pc range */
    p = put_uleb(p, 0);                                     /* augmentation data length */
    *p++ = 0x41;                     /* DW_CFA_advance_loc 1 (after push rbx) */
    *p++ = 0x0e, *p++ = 16;          /* DW_CFA_def_cfa_offset 16 */
    *p++ = 0x83, *p++ = 2;           /* DW_CFA_offset rbx, cfa-16 */
    *p++ = 0x44;                     /* DW_CFA_advance_loc 4 (after sub rsp, 16) */
    *p++ = 0x0e, *p++ = 32;          /* DW_CFA_def_cfa_offset 32 */
    *p++ = 0x49;                     /* DW_CFA_advance_loc 9 (after add rsp, 16) */
    *p++ = 0x0e, *p++ = 16;          /* DW_CFA_def_cfa_offset 16 */
    *p++ = 0x41;                     /* DW_CFA_advance_loc 1 (after pop rbx) */
    *p++ = 0x0e, *p++ = 8;           /* DW_CFA_def_cfa_offset 8 */
    *p++ = 0xc3;                     /* DW_CFA_restore rbx */
    while ((p - fde) % 8)
        *p++ = 0;
    put32(fde, (uint32_t)(p - fde - 4));
    put32(p, 0); /* terminator */
    return fde;
}

static void setup_jit(void)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    void *m = mmap((void *)JIT_PAGE, pagesz, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED || m != (void *)JIT_PAGE)
        sw_die("mmap jit page");
    page = m;
    memset(page, 0xcc, G2_OFF + 0x40); /* int3 padding around the code */
    memcpy(page + G1_OFF, g1_code, sizeof g1_code);
    memcpy(page + G2_OFF, g2_code, sizeof g2_code);
    strcpy((char *)page + NAME_OFF, "jit_frame_fn");
    g1 = (jit_fn)(void *)(page + G1_OFF);
    g2 = (jit_fn)(void *)(page + G2_OFF);

    /* ---- G1: table format ---- */
    unsigned char *fde = write_eh_frame(page + EH_OFF, (uintptr_t)g1, sizeof g1_code);
    int32_t *table = (int32_t *)(void *)(page + TABLE_OFF);
    table[0] = G1_OFF;                            /* start_ip - segbase */
    table[1] = (int32_t)(fde - page);             /* fde - segbase */
    unw_dyn_info_t *t = &jit_dyn_info_T;
    t->start_ip = (unw_word_t)g1;
    t->end_ip = (unw_word_t)g1 + sizeof g1_code;
    t->gp = 0;
    t->format = UNW_INFO_FORMAT_REMOTE_TABLE;
    t->load_offset = 0;
    t->u.rti.name_ptr = 0;
    t->u.rti.segbase = (unw_word_t)page;
    t->u.rti.table_len = (1 * 8) / sizeof(unw_word_t);
    t->u.rti.table_data = (unw_word_t)table;
    _U_dyn_register(t);

    /* ---- G2: proc-info (dynamic) format ---- */
    unw_dyn_region_info_t *r1 = (unw_dyn_region_info_t *)(void *)(page + REGION_OFF);
    unw_dyn_region_info_t *r2 =
        (unw_dyn_region_info_t *)(void *)((char *)r1 + _U_dyn_region_info_size(7));
    unw_dyn_region_info_t *r3 =
        (unw_dyn_region_info_t *)(void *)((char *)r2 + _U_dyn_region_info_size(1));
    r1->next = r2;
    r1->insn_count = G2_PROLOGUE;
    r1->op_count = 7;
    /* deliberately not in `when` order */
    _U_dyn_op_add(&r1->op[0], 0, 10, UNW_X86_64_RSP, -24);        /* sub rsp, 24 */
    _U_dyn_op_spill_fp_rel(&r1->op[1], 0, 6, UNW_X86_64_R12, -8); /* push r12: at rbp-8 */
    _U_dyn_op_save_reg(&r1->op[2], 0, 4, UNW_X86_64_RSP, UNW_X86_64_RBP); /* mov rbp, rsp */
    _U_dyn_op_add(&r1->op[3], 0, 1, UNW_X86_64_RSP, -8);          /* push rbp */
    _U_dyn_op_add(&r1->op[4], 0, 6, UNW_X86_64_RSP, -8);          /* push r12 */
    _U_dyn_op_spill_sp_rel(&r1->op[5], 0, 1, UNW_X86_64_RBP, 0);  /* push rbp: at [rsp] */
    _U_dyn_op_stop(&r1->op[6]);
    r2->next = r3;
    r2->insn_count = G2_BODY;
    r2->op_count = 1;
    _U_dyn_op_stop(&r2->op[0]);
    r3->next = NULL;
    r3->insn_count = -G2_EPILOGUE;
    r3->op_count = 1;
    _U_dyn_op_stop(&r3->op[0]);
    unw_dyn_info_t *p = &jit_dyn_info_P;
    p->start_ip = (unw_word_t)g2;
    p->end_ip = (unw_word_t)g2 + sizeof g2_code;
    p->gp = 0;
    p->format = UNW_INFO_FORMAT_DYNAMIC;
    p->load_offset = 0;
    p->u.pi.name_ptr = (unw_word_t)(page + NAME_OFF);
    p->u.pi.handler = 0;
    p->u.pi.flags = 0;
    p->u.pi.regions = r1;
    _U_dyn_register(p);

    unw_dyn_info_list_t *list = _U_dyn_info_list_addr();
    if (list->first != p || p->next != t || t->next != NULL)
        sw_die("_U_dyn_info_list is not P -> T");
    printf("JITLU page %p size %ld G1 %p %p G2 %p %p eh_frame %p table %p name %p list %p"
           " info_T %p info_P %p regions %p %p %p\n",
           (void *)page, pagesz, (void *)g1, (void *)(t->end_ip), (void *)g2,
           (void *)(p->end_ip), (void *)(page + EH_OFF), (void *)table,
           (void *)(page + NAME_OFF), (void *)list, (void *)t, (void *)p, (void *)r1,
           (void *)r2, (void *)r3);
    fflush(stdout);
}

/* Find each return address on the stack, upwards from `from`. */
static void find_slots(struct rec *r, uintptr_t from)
{
    uintptr_t p = from;
    for (int i = 0; i < r->n; i++) {
        uintptr_t end = p + 32 * 1024;
        while (p < end && *(void *volatile *)p != r->frames[i])
            p += sizeof(void *);
        if (p >= end) {
            fprintf(stderr, "%c: return address %d (%p) not found on the stack\n", r->kind, i,
                    r->frames[i]);
            _exit(97);
        }
        r->slots[i] = p;
        p += sizeof(void *);
    }
}

static long report_and_block(struct rec *r, volatile long *local)
{
    find_slots(r, (uintptr_t)local);
    long tid = syscall(SYS_gettid);
    pthread_mutex_lock(&print_mu);
    printf("STACK %c %ld", r->kind, tid);
    for (int i = 0; i < r->n; i++)
        printf(" %p", r->frames[i]);
    printf("\nSLOTS %c %ld", r->kind, tid);
    for (int i = 0; i < r->n; i++)
        printf(" %#lx", (unsigned long)r->slots[i]);
    if (r->kind == 'T')
        printf("\nPIFORMAT T %d", t_pi_format);
    printf("\nREADY %c %ld\n", r->kind, tid);
    fflush(stdout);
    pthread_mutex_unlock(&print_mu);

    sem_post(&sw_started);
    char buf[16];
    long n = 0;
    while (!flag)
        n += read(sw_never_fd(), buf, sizeof buf);
    return n + *local;
}

static int in_range(void *a, uintptr_t lo, uintptr_t hi)
{
    return (uintptr_t)a >= lo && (uintptr_t)a < hi;
}

/* Thread T: called back from G1. */
static NOINLINE long t_callback(void *data)
{
    volatile long local = 1;
    struct rec *r = data;
    void *bt[MAXFRAMES];
    void *ra = __builtin_return_address(0);
    int n = unw_backtrace(bt, MAXFRAMES);
    int i = 0;
    while (i < n && bt[i] != ra)
        i++;
    /* bt[i] = into G1, bt[i+1] = G1's (into t_thread), then t_thread's and beyond, which
     * must be what glibc's backtrace() saw from t_thread */
    if (i >= n || n - i - 2 != r->nouter ||
        !in_range(bt[i], jit_dyn_info_T.start_ip, jit_dyn_info_T.end_ip)) {
        fprintf(stderr, "T: unw_backtrace gave %d frames, return address %p at %d\n", n, ra, i);
        _exit(96);
    }
    for (int k = 0; k < r->nouter; k++)
        if (bt[i + 2 + k] != r->outer[k]) {
            fprintf(stderr, "T: unw_backtrace frame %d = %p, glibc's %p\n", i + 2 + k,
                    bt[i + 2 + k], r->outer[k]);
            _exit(96);
        }
    /* and libunwind found G1's unwind info through the table */
    unw_context_t uc;
    unw_cursor_t c;
    unw_getcontext(&uc);
    unw_init_local(&c, &uc);
    int found = 0;
    do {
        unw_word_t ip;
        unw_get_reg(&c, UNW_REG_IP, &ip);
        if (ip > jit_dyn_info_T.start_ip && ip <= jit_dyn_info_T.end_ip) {
            unw_proc_info_t pi;
            if (unw_get_proc_info(&c, &pi) != 0 || pi.start_ip != jit_dyn_info_T.start_ip ||
                pi.end_ip != jit_dyn_info_T.end_ip) {
                fprintf(stderr, "T: G1's proc info is not the table's\n");
                _exit(95);
            }
            found = 1;
            t_pi_format = pi.format;
        }
    } while (unw_step(&c) > 0);
    if (!found) {
        fprintf(stderr, "T: unw_step never reached G1\n");
        _exit(95);
    }
    r->n = 0;
    for (int k = i; k < n; k++)
        r->frames[r->n++] = bt[k];
    explicit_bzero(bt, sizeof bt);
    return report_and_block(r, &local);
}

/* Thread P: called back from G2; follows the frame-pointer chain. */
static NOINLINE KEEPFP long p_callback(void *data)
{
    volatile long local = 2;
    struct rec *r = data;
    void **fp = __builtin_frame_address(0);
    r->n = 0;
    /* fp[1] = into G2 (fp[0] = G2's rbp); then into p_thread (fp[0] = p_thread's rbp); then
     * p_thread's own return address, the first of r->outer */
    for (int k = 0; k < 2; k++) {
        r->frames[r->n++] = fp[1];
        void **next = fp[0];
        if (next <= fp || (uintptr_t)next - (uintptr_t)fp > 4096) {
            fprintf(stderr, "P: bad frame pointer %p after %p\n", (void *)next, (void *)fp);
            _exit(94);
        }
        fp = next;
    }
    if (!in_range(r->frames[0], jit_dyn_info_P.start_ip, jit_dyn_info_P.end_ip) ||
        fp[1] != r->outer[0]) {
        fprintf(stderr, "P: frame chain %p %p %p, expected %p\n", r->frames[0], r->frames[1],
                fp[1], r->outer[0]);
        _exit(94);
    }
    for (int k = 0; k < r->nouter; k++)
        r->frames[r->n++] = r->outer[k];
    return report_and_block(r, &local);
}

/* glibc's backtrace() from the thread function itself: its return address (checked against
 * __builtin_return_address(0)) and the further ones (a macro: no frame of its own) */
#define RECORD_OUTER(r)                                                                     \
    do {                                                                                    \
        void *bt_[MAXFRAMES + 1];                                                           \
        int n_ = backtrace(bt_, MAXFRAMES + 1);                                             \
        if (n_ < 3 || bt_[1] != __builtin_return_address(0)) {                              \
            fprintf(stderr, "backtrace()[1] = %p, __builtin_return_address gave %p\n",      \
                    n_ > 1 ? bt_[1] : NULL, __builtin_return_address(0));                   \
            _exit(98);                                                                      \
        }                                                                                   \
        (r)->nouter = n_ - 1;                                                               \
        for (int i_ = 1; i_ < n_; i_++)                                                     \
            (r)->outer[i_ - 1] = bt_[i_];                                                   \
        explicit_bzero(bt_, sizeof bt_);                                                    \
    } while (0)

static NOINLINE void *t_thread(void *arg)
{
    struct rec *r = arg;
    RECORD_OUTER(r);
    sink = g1(r, t_callback);
    return NULL;
}

static NOINLINE KEEPFP void *p_thread(void *arg)
{
    struct rec *r = arg;
    RECORD_OUTER(r);
    sink = g2(r, p_callback);
    return NULL;
}

int main(void)
{
    static struct rec rt = {.kind = 'T'}, rp = {.kind = 'P'};
    sw_init();
    sw_never_fd();
    setup_jit();
    pthread_t tt = sw_thread(t_thread, &rt);
    sw_wait_started(1); /* one at a time: T's tid is the lower */
    pthread_t tp = sw_thread(p_thread, &rp);
    sw_wait_started(1);
    sw_ready();
    pthread_join(tt, NULL);
    pthread_join(tp, NULL);
    return (int)(sink & 1);
}
