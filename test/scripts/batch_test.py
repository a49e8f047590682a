#!/usr/bin/env python3
"""Batches and signatures: NDJSON in the order given, error objects, exit
codes, --jobs, --summary, and crash signatures that survive ASLR.

Usage: batch_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import pty
import shutil
import subprocess
import tempfile

import dumps

check = dumps.Checks()
run = dumps.run_in


def valid_lines(text, paths, validator):
    """Whether text holds one schema-valid JSON document per path, for exactly those paths."""
    try:
        documents = [json.loads(line) for line in text.splitlines()]
    except ValueError:
        return False
    return (sorted(d["dump"]["path"] for d in documents) == sorted(paths)
            and not any(any(validator.iter_errors(d)) for d in documents))


def check_isolation(stackwalk, unpacked, files):
    """Dumps whose walk crashes, hangs or exhausts memory cost only their own report."""
    good = ["cores/crash-segv.core", "cores/sig-abort.core", "cores/threads-O0-fp.core"]
    faults = {"crash": "crashed", "hang": "timeout", "oom": "out_of_memory"}
    with tempfile.TemporaryDirectory() as tmp:
        bad = {}
        for fault in faults:
            bad[fault] = os.path.join(tmp, f"fault-{fault}.core")
            shutil.copy(os.path.join(unpacked, good[0]), bad[fault])
        batch = [good[0], bad["crash"], good[1], bad["hang"], bad["oom"], good[2]]
        # Under ASan its own SEGV handler would end the worker with exit status 1: let the signal kill it.
        asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "handle_segv=0"]))
        env = dict(os.environ, STACKWALK_TEST_FAULT=",".join(f"{f}:fault-{f}" for f in faults), ASAN_OPTIONS=asan)
        # The exhaustion must pass 256 MiB well before the timeout, even on a loaded machine, and a
        # good dump stay well below it, even under ASan.
        r = subprocess.run([stackwalk, *batch, "--ndjson", "-a", "--jobs", "2", "--timeout", "8",
                            "--max-memory", "256", *files], cwd=unpacked, env=env, capture_output=True, text=True)
        lines = r.stdout.splitlines()
        check(len(lines) == len(batch) and r.returncode == 1,
              f"a batch with a crash, a hang and an exhaustion: one line per dump, exit 1 ({len(lines)}, {r.returncode})")
        separate = {core: run(stackwalk, [core, "--ndjson", "-a"] + files, unpacked).stdout for core in good}
        for path, line in zip(batch, lines):
            if path in separate:
                check(line + "\n" == separate[path], f"{path}: byte-identical to its separate run")
                continue
            kind = faults[os.path.basename(path)[len("fault-"):-len(".core")]]
            error = json.loads(line).get("error", {})
            check(error.get("kind") == kind and path in error.get("message", ""),
                  f"{path}: an error object of kind {kind} ({error})")
            check(kind != "crashed" or error.get("signal") == 11, "a crashed walk names its signal")
        for path, why in ((bad["crash"], "crashed with signal 11"), (bad["hang"], "longer than 8 s"),
                          (bad["oom"], "more than 256 MiB")):
            check(f"stackwalk: {path}: " in r.stderr and why in r.stderr, f"stderr says why: {why}")

        # A single dump opts in with --timeout.
        r = subprocess.run([stackwalk, bad["hang"], "--json", "--timeout", "1", *files], cwd=unpacked, env=env,
                           capture_output=True, text=True)
        check(r.returncode == 3 and json.loads(r.stdout)["error"]["kind"] == "timeout",
              f"one dump with --timeout: exit 3 and the error object ({r.returncode})")


def check_recipes(stackwalk, unpacked, files):
    """README's scale-out recipes over 60 dumps, 4 of them unreadable: one valid line per
    dump, and the documented exit codes (1: some dumps could not be read)."""
    validator = dumps.schema_validator()
    cores = sorted(os.path.join("cores", c) for c in os.listdir(os.path.join(unpacked, "cores")))
    env = dict(os.environ, PATH=os.path.dirname(stackwalk) + os.pathsep + os.environ["PATH"])
    with tempfile.TemporaryDirectory() as tmp:
        crashes = os.path.join(tmp, "crashes")
        os.mkdir(crashes)
        for i in range(56):
            os.symlink(os.path.join(unpacked, cores[i % len(cores)]), os.path.join(crashes, f"{i:03}.core"))
        for i in range(4):
            with open(os.path.join(crashes, f"bad{i}.core"), "wb") as f:
                f.write(b"\x7fELF" + bytes(60 * i))
        paths = sorted(os.path.join(crashes, name) for name in os.listdir(crashes))
        syms = ["--sysroot", os.path.join(unpacked, "sysroot"), "--module-path", os.path.join(unpacked, "bin")]
        recipes = {
            "find | stackwalk --from -": f"find {crashes} -name '*.core' | stackwalk --from - --ndjson",
            "find | xargs -P 8": f"find {crashes} -name '*.core' -print0 | xargs -0 -r -n 25 -P 8 stackwalk --ndjson",
        }
        for name, command in recipes.items():
            out = os.path.join(tmp, "all.ndjson")
            r = subprocess.run(f"{command} {' '.join(syms)} > {out}", shell=True, env=env, capture_output=True, text=True)
            with open(out) as f:
                text = f.read()
            # xargs exits 123 when a stackwalk exits 1-125.
            expected = 123 if "xargs" in command else 1
            check(valid_lines(text, paths, validator) and r.returncode == expected,
                  f"README recipe '{name}': one schema-valid line per dump, exit {r.returncode} (expected {expected})")
        for name, command in {"--from -": "stackwalk --from - --ndjson",
                              "xargs -r": "tr '\\n' '\\0' | xargs -0 -r -n 25 stackwalk --ndjson"}.items():
            empty = subprocess.run(f"find {crashes} -name '*.nothing' | {command}", shell=True, env=env,
                                   capture_output=True, text=True)
            check(empty.returncode == 0 and not empty.stdout and not empty.stderr,
                  f"an empty shard ({name} with no paths): exit 0, no output")
        if shutil.which("parallel"):
            check_parallel_recipe(crashes, paths, syms, env, validator)
        else:
            print("(GNU parallel is not installed: README's parallel recipe not run)")


def check_parallel_recipe(crashes, paths, syms, env, validator):
    """README's GNU parallel recipe: a JSON file per dump; parallel's exit code counts the
    dumps that could not be read."""
    r = subprocess.run(f"parallel -j 4 'stackwalk {{}} --json {' '.join(syms)} > {{}}.json' ::: {crashes}/*.core",
                       shell=True, env=env, capture_output=True, text=True)
    documents = []
    for path in paths:
        with open(path + ".json") as f:
            documents.append(json.load(f))
    unreadable = sum("error" in d for d in documents)
    check(all(d["dump"]["path"] == p for d, p in zip(documents, paths))
          and not any(any(validator.iter_errors(d)) for d in documents) and unreadable == 4 and r.returncode == 4,
          f"README recipe 'parallel': a schema-valid JSON file per dump, exit {r.returncode} (expected 4, the "
          f"{unreadable} unreadable dumps)")


def check_other_documents(stackwalk, unpacked, files):
    """--scan-from and --runtime-info print as reports do: one schema-valid line per dump in a
    batch and with --ndjson, one pretty document for a single dump with --json."""
    validator = dumps.schema_validator()
    cores = ["cores/crash-segv.core", "cores/sig-abort.core"]
    dotnet = (["cores/park-normal.core"], os.path.join(unpacked, "dotnet"),
              ["--sysroot", "../sysroot", "--module-path", "runtime", "--module-path", "app"])
    for option in (["--scan-from", "0x7fffffffe3d0"], ["--runtime-info"]):
        name = option[0]
        r = run(stackwalk, [*cores, *option, "--json", *files], unpacked)
        check(r.returncode == 0 and valid_lines(r.stdout, cores, validator),
              f"{name}, {len(cores)} dumps with --json: one schema-valid line each")
        for batch, cwd, args in ((cores, unpacked, files), dotnet):
            single = run(stackwalk, [batch[0], *option, "--ndjson", *args], cwd)
            pretty = run(stackwalk, [batch[0], *option, "--json", *args], cwd)
            check(single.returncode == 0 and valid_lines(single.stdout, batch[:1], validator)
                  and len(pretty.stdout.splitlines()) > 1 and json.loads(pretty.stdout) == json.loads(single.stdout),
                  f"{name} {batch[0]}: --ndjson one valid line, --json the same document pretty-printed")
    info = json.loads(run(stackwalk, [*dotnet[0], "--runtime-info", "--json", *dotnet[2]], dotnet[1]).stdout)
    check(info["runtime"] and info["runtime"]["threads"], "--runtime-info of a .NET dump: its runtime and threads")


def check_progress(stackwalk, unpacked, files):
    """On a terminal: the bar counts failures, rate and time; an error prints on a line of its
    own above it. Not on a pipe: the error alone."""
    master, slave = pty.openpty()
    batch = ["cores/crash-segv.core", "absent.core", "cores/sig-abort.core"]
    r = subprocess.run([stackwalk] + batch + files + ["-j", "1"], cwd=unpacked, stdout=subprocess.DEVNULL,
                       stderr=slave, timeout=120)
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(master)
    lines = screen.decode(errors="replace").replace("\r\x1b[K", "\n").split("\n")
    error = [line for line in lines if line.startswith("stackwalk: cannot open absent.core")]
    check(r.returncode == 1 and len(error) == 1 and error[0].rstrip("\r") == "stackwalk: cannot open absent.core: "
          "No such file or directory" and "3/3, 1 failed" in screen.decode(errors="replace")
          and "dumps/s" in screen.decode(errors="replace") and "left" in screen.decode(errors="replace"),
          "progress on a terminal: done/total, failures, rate, time left; the error on its own line")
    piped = run(stackwalk, batch + files, unpacked)
    check(piped.stderr == "stackwalk: cannot open absent.core: No such file or directory\n",
          "progress on a pipe: nothing but the error")


def main(stackwalk, unpacked, options):
    files = ["--sysroot", "sysroot", "--module-path", "bin"]
    cores = ["cores/crash-segv.core", "cores/sig-abort.core", "cores/threads-O0-fp.core", "cores/sig-segv-a.core"]
    with tempfile.TemporaryDirectory() as tmp:
        junk = os.path.join(tmp, "junk.bin")
        with open(junk, "w") as f:
            f.write("not a dump")
        batch = [cores[0], junk, cores[1], cores[2], cores[3]]

        r = run(stackwalk, batch + ["--json", "--jobs", "2"] + files, unpacked)
        lines = r.stdout.splitlines()
        documents = [json.loads(line) for line in lines]
        check(len(lines) == len(batch), f"NDJSON: one line per dump ({len(lines)} for {len(batch)})")
        check([d["dump"]["path"] for d in documents] == batch, "NDJSON: in the order given, with --jobs 2")
        check("error" in documents[1] and documents[1]["schema"] == "stackwalk/1"
              and all("threads" in d for i, d in enumerate(documents) if i != 1),
              "a dump that cannot be read gives its own error object; the others their reports")
        check(r.returncode == 1, f"exit 1 when some dumps of a batch could not be read (got {r.returncode})")

        sequential = run(stackwalk, cores + ["--json", "--jobs", "1"] + files, unpacked)
        parallel = run(stackwalk, cores + ["--json", "--jobs", "4"] + files, unpacked)
        check(sequential.returncode == 0 and sequential.stdout == parallel.stdout,
              "exit 0 for a batch without failures; --jobs does not change the output")

        # Workers share module files between dumps: a batch must print what
        # separate runs print, also for one program at two load addresses.
        aslr = ["cores/sig-segv-a.core", "cores/sig-segv-b.core", "cores/sig-abort.core", "cores/crash-segv.core"]
        together = run(stackwalk, aslr + ["--json", "-a", "--jobs", "1"] + files, unpacked).stdout.splitlines()
        apart = [run(stackwalk, [core, "--ndjson", "-a"] + files, unpacked).stdout.strip() for core in aslr]
        check(together == apart, "a batch prints what separate runs print (shared module caches, ASLR)")

        single = run(stackwalk, [cores[0], "--ndjson"] + files, unpacked)
        pretty = run(stackwalk, [cores[0], "--json"] + files, unpacked)
        check(len(single.stdout.splitlines()) == 1 and json.loads(single.stdout) == json.loads(pretty.stdout),
              "--ndjson: a single dump on one line, the same document as --json")
        r = run(stackwalk, [junk], unpacked)
        check(r.returncode == 3, "a single unreadable dump: exit 3, not 1")

    check_recipes(stackwalk, unpacked, files)
    check_other_documents(stackwalk, unpacked, files)
    check_progress(stackwalk, unpacked, files)
    check_isolation(stackwalk, unpacked, files)

    r = run(stackwalk, ["cores/crash-segv.core", "--summary"] + files, unpacked)
    lines = r.stdout.splitlines()
    check(lines[0] == "cores/crash-segv.core:" and len(lines) == 4 and "(crashed): crash-segv!store_field < " in lines[1]
          and "0x" not in r.stdout, "--summary: a line per thread with its top frames, no addresses")

    def signature(core, args=files):
        return json.loads(run(stackwalk, [core, "--json"] + args, unpacked).stdout)["signature"]
    a, b, abort = signature("cores/sig-segv-a.core"), signature("cores/sig-segv-b.core"), signature("cores/sig-abort.core")
    check(a == b and a.startswith("sig-crash!parse_header < sig-crash!handle_request"),
          f"the same crash at different load addresses: equal signatures ({a})")
    check(abort != a and abort.startswith("sig-crash!validate_input"),
          f"a different crash: a different signature, past raise/abort ({abort})")
    check(signature("cores/threads-O0-fp.core") is None, "no crash: no signature")

    # Without the program's file its frames have no names: module+offset tells crashes apart.
    stripped = ["--sysroot", "sysroot"]
    a, b = signature("cores/sig-segv-a.core", stripped), signature("cores/sig-segv-b.core", stripped)
    abort = signature("cores/sig-abort.core", stripped)
    check(a == b and "sig-crash+0x" in a and abort != a,
          f"unnamed frames: the same crash under ASLR alike, another crash apart ({a} / {abort})")

    crash = "cores/crash-segv.core"
    whole = signature(crash)
    tids = [t["tid"] for t in json.loads(run(stackwalk, [crash, "--json", "-a"] + files, unpacked).stdout)["threads"]]
    other = next(t for t in tids if t != json.loads(run(stackwalk, [crash, "--json"] + files, unpacked).stdout)
                 ["crash"]["thread_id"])
    for args in (["--thread", str(other)], ["--max-frames", "1"], ["-a", "--max-frames", "2"]):
        check(signature(crash, files + args) == whole, f"{' '.join(args)}: the same signature ({whole})")

    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
