/* sig-crash.c: one program, two crash signatures, for cores captured with ASLR ON (so
 * the executable's and the libraries' load addresses differ from run to run while the
 * call stacks stay the same). Built -O2 -g; the program's own functions are
 * noinline + noipa (no inlining, no clones such as .isra/.constprop, no sibling calls
 * through a call followed by more work), so each is a real frame with its own name.
 * Kernel cores (the crashing thread's NT_PRSTATUS comes first).
 *
 * No argument (sig-segv-a, sig-segv-b: two runs of the same binary):
 *   main     main -> pthread_join (futex)
 *   reader   reader_worker -> read
 *   worker   request_worker -> handle_request -> parse_header: writes through the
 *            request's NULL output buffer (SIGSEGV, SEGV_MAPERR at 0x0)
 *
 * Argument "abort" (sig-abort):
 *   main     main -> load_config -> validate_input -> abort -> raise
 *            -> __pthread_kill_implementation (SIGABRT)
 *   reader   reader_worker -> read
 *   worker   request_worker -> wait_request -> pthread_cond_wait (never gets a request)
 */
#include "common.h"

#define NOINLINE __attribute__((noinline, noipa))

struct request {
    const char *text; /* "Name: value" */
    char *out;        /* where parse_header copies the name: NULL (the bug) */
    size_t out_len;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct request *pending;
static volatile long sink;

NOINLINE static size_t parse_header(struct request *req)
{
    size_t n = 0;
    while (req->text[n] && req->text[n] != ':') {
        req->out[n] = req->text[n]; /* req->out == NULL: SIGSEGV at address 0 */
        n++;
    }
    req->out_len = n;
    return n;
}

NOINLINE static int handle_request(struct request *req)
{
    sw_wait_others_asleep();
    size_t n = parse_header(req);
    sink += (long)n;
    return (int)n;
}

NOINLINE static struct request *wait_request(void)
{
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!pending)
        pthread_cond_wait(&cv, &mu);
    struct request *req = pending;
    pthread_mutex_unlock(&mu);
    sink++;
    return req;
}

static void *request_worker(void *arg)
{
    (void)arg;
    struct request *req = wait_request();
    sink += handle_request(req);
    return NULL;
}

static void *reader_worker(void *arg)
{
    char c;
    (void)arg;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1);
    return NULL;
}

/* Rejects any input that is not a plain word; "abort" is one (it has no '='). */
NOINLINE static void validate_input(const char *input)
{
    if (strchr(input, '=') == NULL) {
        fprintf(stderr, "sig-crash: invalid input '%s'\n", input);
        abort();
    }
    sink += (long)strlen(input);
}

NOINLINE static int load_config(const char *arg)
{
    sw_wait_others_asleep();
    validate_input(arg);
    sink++;
    return 0;
}

int main(int argc, char **argv)
{
    static struct request req = {"Host: example.org", NULL, 0};
    sw_init();
    sw_never_fd();
    sw_thread(reader_worker, NULL);
    pthread_t worker = sw_thread(request_worker, NULL);
    sw_wait_started(2);
    if (argc > 1) {
        int rc = load_config(argv[1]); /* not a tail call: main stays on the stack */
        sink += rc;
        return rc;
    }
    pthread_mutex_lock(&mu);
    pending = &req;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(worker, NULL);
    return 0;
}
