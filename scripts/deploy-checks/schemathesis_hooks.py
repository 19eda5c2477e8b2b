"""Schemathesis hooks of `npm run check:deploy` (scripts/check-deploy.ts sets SCHEMATHESIS_HOOKS).

Real runs: before schemathesis starts, check-deploy creates a corpus through the API (POST /v1/corpora,
then PUT of its file to the returned upload URL) and names it in EXTAGENTS_CHECK_CORPUS_ID. In the
stateful phase, every positive `POST /v1/runs` asks about that corpus (`map_case` below), so the run
starts (202) and the OpenAPI links (createRun -> getRun, listRunMessages, streamRunEvents; getRun ->
listRunMessages, streamRunEvents) call the other operations with the id of a real run. A generated
corpus would name nothing (404 `corpus-not-found`) and no link would ever be followed. The other
phases and every negative case keep their generated corpus.

One rule of the API has no JSON Schema form: the paths of `POST /v1/corpora` `files` must be unique
(`uniqueItems` only forbids identical items, and two files with one path but different sizes are not
identical). Nor do the cross-field rules of the run options' coverage (shared/config.ts): `coverageMaxChunks`
only with `coverage: 'grow'`, and not below `coverageFirstChunks`. A "schema-valid request rejected"
(ST202) failure is dropped only when the request really breaks one of these rules and the server's only
complaints are those rules; every other failure stays.
This is test configuration, not product code.
"""

import json
import os

import schemathesis
from schemathesis.generation.meta import TestPhase
from schemathesis.generation.modes import GenerationMode

CORPUS_ID = os.environ.get("EXTAGENTS_CHECK_CORPUS_ID")

DUPLICATE_PATHS = "file paths must be unique"
# The other rule without a JSON Schema form: `cursor` of GET /v1/runs/{runId}/messages (and of GET /v1/runs) is opaque, only a
# `nextCursor` the server gave is valid; any other string of the declared form (at least 19 characters of
# base64url, the shortest cursor the server issues) is 400. `0` and other shorter strings are outside it.
# What the server says of a cursor of that form it did not issue, once the run exists (real runs of the
# stateful phase): one of decodeCursor's two messages (shared/api/core.ts). The form's own message
# (shared/api/schemas.ts) is not among them: the server giving it for a cursor of the documented form
# would be a disagreement between the two, and stays a failure.
CURSOR_ERRORS = {
    "GET /v1/runs/{runId}/messages": (
        "not a cursor of this API: pass nextCursor of a previous page of this run",
        "a cursor of another run: pass nextCursor of a previous page of run ",
    ),
    # The run list's cursor follows the same rule (shared/api/core.ts listRuns): of the declared form
    # (at least 19 characters of base64url), only a `nextCursor` the server gave for the run list is valid.
    "GET /v1/runs": (
        "not a cursor of this API: pass nextCursor of a previous page of the run list",
        "not a cursor of the run list: pass nextCursor of a previous page of the run list",
    ),
}


def _only_cursor_rule(problem, messages) -> bool:
    errors = problem.get("errors") if isinstance(problem, dict) else None
    if not isinstance(errors, list) or not errors:
        return False
    return all(
        isinstance(error, dict)
        and error.get("parameter") == "cursor"
        and isinstance(error.get("detail"), str)
        and error["detail"].startswith(messages)
        for error in errors
    )


# The coverage rules' messages (shared/config.ts RunOptionsSchema) and the default first tranche they
# compare with when the request gives none (`coverageFirstChunks` default 4, the same file).
COVERAGE_RULES = ("only with coverage 'grow'", "must be at least coverageFirstChunks")
COVERAGE_FIRST_DEFAULT = 4


def _number(value) -> bool:
    # JSON numbers reach the hook as int or float (103.0); a bool is not one.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _breaks_a_coverage_rule(body) -> bool:
    options = body.get("options") if isinstance(body, dict) else None
    if not isinstance(options, dict) or not _number(options.get("coverageMaxChunks")):
        return False
    cap = options["coverageMaxChunks"]
    first = options.get("coverageFirstChunks", COVERAGE_FIRST_DEFAULT)
    return options.get("coverage") != "grow" or (_number(first) and cap < first)


def _repeats_a_path(body) -> bool:
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, list):
        return False
    paths = [f.get("path") for f in files if isinstance(f, dict)]
    return len(paths) != len(set(paths))


# Refusals before any model call that weigh the corpus against a budget the request states (docs/API.md:
# 422 cost-limit-exceeded with options.maxCostUsd, quota-exceeded with options.quotaRequestsPerMinute or
# quotaTokensPerMinute, shared/api/problem.ts): whether a schema-valid budget suffices depends on the
# corpus's size, which no JSON Schema can say, as for the coverage rules above.
BUDGET_REFUSALS = {
    "tag:extagents,2026:cost-limit-exceeded": ("maxCostUsd",),
    "tag:extagents,2026:quota-exceeded": ("quotaRequestsPerMinute", "quotaTokensPerMinute"),
}


def _refused_by_a_stated_budget(problem, body) -> bool:
    options = body.get("options") if isinstance(body, dict) else None
    stated = BUDGET_REFUSALS.get(problem.get("type")) if isinstance(problem, dict) else None
    return stated is not None and isinstance(options, dict) and any(name in options for name in stated)


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    if getattr(failure, "code", None) != "ST202":
        return True
    try:
        problem = json.loads(response.content)
    except (ValueError, TypeError):
        return True
    details = {error.get("detail") for error in problem.get("errors", []) if isinstance(error, dict)}
    if case.operation.label in CURSOR_ERRORS:
        messages = CURSOR_ERRORS[case.operation.label]
        return not (_only_cursor_rule(problem, messages) and (case.query or {}).get("cursor") is not None)
    if case.operation.label == "POST /v1/runs" and _refused_by_a_stated_budget(problem, case.body):
        return False
    if case.operation.label == "POST /v1/runs":
        only_coverage = bool(details) and all(isinstance(d, str) and any(rule in d for rule in COVERAGE_RULES) for d in details)
        return not (only_coverage and _breaks_a_coverage_rule(case.body))
    if case.operation.label != "POST /v1/corpora":
        return True
    return not (details == {DUPLICATE_PATHS} and _repeats_a_path(case.body))


@schemathesis.hook
def map_case(context, case):
    meta = case.meta
    if (
        CORPUS_ID
        and case.operation.label == "POST /v1/runs"
        and meta is not None
        and meta.phase.name == TestPhase.STATEFUL
        and meta.generation.mode == GenerationMode.POSITIVE
        and isinstance(case.body, dict)
    ):
        case.body = {**case.body, "corpus": {"id": CORPUS_ID}}
    return case
