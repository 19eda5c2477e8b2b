"""Schemathesis hooks of `npm run check:deploy` (scripts/check-deploy.ts sets SCHEMATHESIS_HOOKS).

One rule of the API has no JSON Schema form: the paths of `POST /v1/corpora` `files` must be unique
(`uniqueItems` only forbids identical items, and two files with one path but different sizes are not
identical). A "schema-valid request rejected" (ST202) failure is dropped only when the request really
repeats a path and the server's only complaint is that rule; every other failure stays.
This is test configuration, not product code.
"""

import json

import schemathesis

DUPLICATE_PATHS = "file paths must be unique"
# The other rule without a JSON Schema form: `cursor` of GET /v1/runs/{runId}/messages is opaque, only a
# `nextCursor` the server gave is valid; any other string of the declared pattern (e.g. `0`) is 400.
CURSOR_ERROR = "cursor must be the nextCursor of a previous page of this run"


def _repeats_a_path(body) -> bool:
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, list):
        return False
    paths = [f.get("path") for f in files if isinstance(f, dict)]
    return len(paths) != len(set(paths))


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    if getattr(failure, "code", None) != "ST202":
        return True
    try:
        problem = json.loads(response.content)
    except (ValueError, TypeError):
        return True
    details = {error.get("detail") for error in problem.get("errors", []) if isinstance(error, dict)}
    if case.operation.label == "GET /v1/runs/{runId}/messages":
        return not (details == {CURSOR_ERROR} and (case.query or {}).get("cursor") is not None)
    if case.operation.label != "POST /v1/corpora":
        return True
    return not (details == {DUPLICATE_PATHS} and _repeats_a_path(case.body))
