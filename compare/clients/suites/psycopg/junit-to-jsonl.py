#!/usr/bin/env python3
"""pytest's junit XML -> the kit's results.jsonl: one {"name", "status", "error"?} per test.

usage: junit-to-jsonl.py junit.xml [PYTEST_EXIT LIMIT_SECONDS] > results.jsonl

A test's name is its junit classname and name joined with "::" (tests.test_copy::test_copy_in[...]).
<failure> and <error> (setup, call or teardown) are "fail", <skipped> (skips and xfails) is "skip",
anything else is "pass". pytest writes a teardown error as a second <testcase> of the same name: a
name's rows merge, failure first. Missing or unreadable XML (the run was killed before pytest wrote
it) gives one failing row, so the run never counts as empty-and-fine; so does a run that was stopped
(exit 124 from `timeout`, 137 killed, 2 interrupted), after the rows of the tests it did run.
"""
import json
import sys
import xml.etree.ElementTree as ET

RANK = {"pass": 0, "skip": 1, "fail": 2}


def main(path, rc=None, limit=None):
    if rc in ("124", "137", "2"):
        why = f"the run was stopped after {limit} s" if rc != "2" else "pytest was interrupted"
        print(json.dumps({"name": "(pytest run)", "status": "fail", "error": f"exit {rc}: {why}"}))
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as ex:
        print(json.dumps({"name": "(pytest run)", "status": "fail", "error": f"no junit XML: {ex}"}))
        return
    rows = {}
    for case in root.iter("testcase"):
        cls = case.get("classname") or ""
        name = f"{cls}::{case.get('name')}" if cls else case.get("name") or "?"
        status, error = "pass", None
        for child in case:
            if child.tag in ("failure", "error"):
                status = "fail"
                text = (child.get("message") or "") + "\n" + (child.text or "")
                error = (error + "\n" if error else "") + f"[{child.tag}] " + text.strip()
            elif child.tag == "skipped" and status == "pass":
                status = "skip"
                error = child.get("message")
        old = rows.get(name)
        if old is None or RANK[status] > RANK[old["status"]]:
            row = {"name": name, "status": status}
            if error:
                row["error"] = error[:2000]
            rows[name] = row
    for row in rows.values():
        print(json.dumps(row))


if __name__ == "__main__":
    main(*sys.argv[1:4])
