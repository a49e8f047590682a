#!/usr/bin/env python3
"""Every golden JSON report validates against schema/stackwalk-1.schema.json.

Usage: schema_test.py

Uses Debian's python3-jsonschema (dumps.schema_validator).
"""
import glob
import json
import os
import sys

import dumps


def main():
    validator = dumps.schema_validator()
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
