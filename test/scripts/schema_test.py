#!/usr/bin/env python3
"""Every golden JSON report validates against schema/stackwalk-1.schema.json.

Usage: schema_test.py

Uses Debian's python3-jsonschema; when the Python running this lacks it, the
test re-runs itself under /usr/bin/python3, and skips if that lacks it too.
"""
import glob
import json
import os
import sys

import dumps

try:
    import jsonschema
except ImportError:
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    dumps.skip("the jsonschema module is not installed (Debian package python3-jsonschema)")


def main():
    with open(os.path.join(dumps.ROOT, "schema", "stackwalk-1.schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    paths = sorted(glob.glob(os.path.join(dumps.ROOT, "test", "golden", "*.json")))
    failures = 0
    for path in paths:
        with open(path) as f:
            errors = list(validator.iter_errors(json.load(f)))
        for error in errors[:5]:
            print(f"FAIL {os.path.basename(path)}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        failures += bool(errors)
    print(f"{len(paths) - failures}/{len(paths)} golden JSON files valid")
    return 1 if failures or not paths else 0


if __name__ == "__main__":
    sys.exit(main())
