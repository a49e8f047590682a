/* jit-gdb-code.c: the "JIT-compiled" code of the jit-gdb dump (see jit-gdb.c).
 *
 * Not a program of its own: make-dumps.sh builds it into a freestanding, position-dependent
 * ELF executable linked at the fixed address 0x7e0000000000 (entry point jit_entry), with
 * .eh_frame (+ .eh_frame_hdr), .symtab and DWARF:
 *
 *   gcc -O1 -g -fasynchronous-unwind-tables -ffreestanding -fno-pic -fno-stack-protector
 *       -nostdlib -static -no-pie -Wl,-Ttext-segment=0x7e0000000000 -Wl,-e,jit_entry
 *       -Wl,--eh-frame-hdr -Wl,--build-id
 *
 * jit-gdb reads that file at run time, copies its PT_LOAD segments to their link addresses
 * and registers the whole file with gdb's JIT interface. Each of its two JIT threads then
 * calls jit_entry -> jit_middle -> jit_dispatch -> ctx->callback (a host function, which
 * blocks). Each JIT function records its own return address in ctx->ret (innermost
 * first, ret[0] is the host callback's), and does work after each call so that no call is
 * a tail call.
 */
struct jit_ctx {
    long (*callback)(struct jit_ctx *ctx, long x);
    void *ret[4]; /* [1] jit_dispatch's, [2] jit_middle's, [3] jit_entry's return address */
    long value;
};

#define NOINLINE __attribute__((noinline, noclone))

NOINLINE long jit_dispatch(struct jit_ctx *ctx, long x)
{
    ctx->ret[1] = __builtin_return_address(0);
    long r = ctx->callback(ctx, x * 3 + 1);
    ctx->value ^= r;
    return r - x;
}

NOINLINE long jit_middle(struct jit_ctx *ctx, long x)
{
    long a = ctx->value;
    ctx->ret[2] = __builtin_return_address(0);
    long r = jit_dispatch(ctx, x + 5);
    ctx->value += a * r;
    return r + a;
}

NOINLINE long jit_entry(struct jit_ctx *ctx, long x)
{
    ctx->ret[3] = __builtin_return_address(0);
    long r = jit_middle(ctx, x + 7);
    ctx->value += r;
    return r + 1;
}
