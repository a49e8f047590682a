#!/usr/bin/env python3
"""README's examples run as written, and the output it shows is stackwalk's.

- Every `stackwalk` (or `find ... | stackwalk`) line of README's ```sh blocks runs, as
  written, in a directory holding the files it names (core.1234, crash.dmp, crashes/,
  ./symbols, ...: links to test dumps and folders): it exits 0 and prints something, and
  what it prints as JSON is valid against the schema. (`./dev.sh` lines are what CI runs;
  the ```yaml recipes are templates, and batch_test.py runs their command lines.)
- Every line of README's plain ``` output blocks is a line of a golden text file, so the
  samples change when the output does.

Usage: readme_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile

import dumps

check = dumps.Checks()
README = os.path.join(dumps.ROOT, "README.md")


def code_blocks(text, language):
    """The bodies of the fenced blocks tagged `language` ("" for untagged ones)."""
    blocks, body, tag = [], None, None
    for line in text.splitlines():
        if body is None and line.startswith("```"):
            body, tag = [], line[3:].strip()
        elif body is not None and line == "```":
            if tag == language:
                blocks.append("\n".join(body))
            body = None
        elif body is not None:
            body.append(line)
    return blocks


def command_lines(text):
    return [line for block in code_blocks(text, "sh") for line in block.splitlines()
            if re.match(r"(stackwalk|find|parallel) ", line)]


def stage(directory, unpacked):
    """The files and folders README's examples name, as links to the test dumps."""
    link = lambda target, name: os.symlink(os.path.join(unpacked, target), os.path.join(directory, name))
    link("cores/crash-segv.core", "core.1234")
    link("cores/crash-segv.core", "core")
    link("windows/dumps/crash-av.dmp", "crash.dmp")
    link("sysroot", "rootfs")
    link("bin/crash-segv", "myprog")
    link("bin", "syms")
    link("bin", "symbols")
    link("windows/bin", "binaries")
    link("windows/symbols", "symbolstore")
    os.mkdir(os.path.join(directory, "crashes"))
    for dump in glob.glob(os.path.join(unpacked, "windows", "dumps", "*.dmp"))[:4]:
        os.symlink(dump, os.path.join(directory, "crashes", os.path.basename(dump)))
    for core in ("crash-segv", "sig-abort"):
        link(f"cores/{core}.core", os.path.join("crashes", f"{core}.core"))


def files_under(directory):
    return {os.path.join(root, name) for root, _, names in os.walk(directory) for name in names}


def json_documents(text):
    """The JSON documents in stackwalk's output: one pretty document, or one per line."""
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines()]


def check_commands(stackwalk, unpacked):
    validator = dumps.schema_validator()
    env = dict(os.environ, PATH=os.path.dirname(stackwalk) + os.pathsep + os.environ["PATH"])
    with tempfile.TemporaryDirectory() as tmp:
        stage(tmp, unpacked)
        for command in command_lines(open(README).read()):
            if command.startswith("parallel") and not shutil.which("parallel"):
                continue
            before = files_under(tmp)
            r = subprocess.run(command, shell=True, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
            written = sorted(files_under(tmp) - before)
            contents = []
            for path in written:
                with open(path) as f:
                    contents.append(f.read())
                os.remove(path)
            output = r.stdout + "".join(contents)
            valid = True
            if "--json" in command or "--ndjson" in command:
                try:  # several files (parallel's {}.json) are each one document
                    documents = [d for text in contents for d in json_documents(text)] \
                        if len(written) > 1 else json_documents(output)
                    valid = not any(any(validator.iter_errors(d)) for d in documents)
                except ValueError:
                    valid = False
            check(r.returncode == 0 and output.strip() and valid,
                  f"README runs: {command} (exit {r.returncode}{'' if valid else ', invalid JSON'})")


def check_samples():
    golden = set()
    for path in glob.glob(os.path.join(dumps.ROOT, "test", "golden", "*.txt")):
        golden |= set(open(path).read().splitlines())
    for block in code_blocks(open(README).read(), ""):
        lines = [line for line in block.splitlines() if line.strip()]
        missing = [line for line in lines if line not in golden]
        check(not missing, f"README's sample ({lines[0][:60]}...) is golden output"
              + (f"; not: {missing[0][:100]}" if missing else ""))


def main(stackwalk, unpacked, options):
    check_commands(stackwalk, unpacked)
    check_samples()
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
