"""Mutation testing on the modules that decide: `python tools/mutation.py [--module wall,spill,...]`.

Each module is mutated by mutmut (3.x) against the fast tests that exercise it, in a work directory of
its own under `build/mutation/<module>` (mutmut copies the package there, rewrites the chosen files with
every mutant behind a switch, and runs each mutant against the tests that reach the mutated function).
mutmut runs through `tools/mutmut_checked.py`, which lets it mutate functions decorated with `@checked`.
The command then prints, per module, how many mutants were killed, how many survived but are listed as
equivalent (or out of mutmut's reach) in `tools/mutation_equivalent.toml` with a reason, and how many
survived; and it lists every unexplained survivor with its change, so a contributor can kill it with a
test or list it.

An entry of the equivalence list names a function and the change (the lines the mutant removed and
added), never a mutant's number, so it stays attached to its mutant when mutmut renumbers a function's
mutants; an entry that matches no survivor any more is reported as stale.

Not part of the suite: a full pass takes tens of minutes on two cores. It runs at a lower priority
(`--nice`, 10 by default). See docs/testing.md.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.toml"
# mutmut's command line, taught to mutate the functions that `@checked` decorates
MUTMUT = (sys.executable, str(ROOT / "tools" / "mutmut_checked.py"))
WORK = ROOT / "build" / "mutation"

# mutmut's statuses, as `mutmut results --all true` prints them, grouped for the score
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
NOT_RUN = {"not checked", "check was interrupted by user", "skipped"}


@dataclass(frozen=True, kw_only=True)
class Module:
    """One module under mutation: the files mutated and the tests that are to kill their mutants."""

    sources: tuple[str, ...]
    tests: tuple[str, ...]
    # pytest arguments of the run besides the tests (a marker selection)
    pytest_args: tuple[str, ...] = ()
    # paths beside `flower/` and `tests/` that the tests read
    also_copy: tuple[str, ...] = ()
    # files a mutant may leave in mutmut's working directory (an outbox mutated to take ":memory:" for a
    # file name), removed before each mutmut run so that its clean run of the tests starts clean
    leftovers: tuple[str, ...] = ()
    # mutmut stops a mutant after (the tests' time + 1 s) x this x 2 of CPU time and counts it killed
    # (a loop that never ends); its default, 15, gives a mutant that loops minutes when its tests take
    # seconds
    timeout_multiplier: float | None = None
    doc: str = ""


_GLANCE_TESTS = (
    "tests/glance/test_glance.py",
    "tests/glance/test_core.py",
    "tests/glance/test_deny.py",
    "tests/glance/test_files.py",
    "tests/glance/test_hardening.py",
    "tests/glance/test_properties.py",
)

MODULES: dict[str, Module] = {
    "cost": Module(
        doc="the cost model: prices, the simulated prompt cache, the dollar breakdown",
        sources=("flower/_cost/*",),
        tests=("tests/cost/test_cost.py", "tests/cost/test_rules.py"),
    ),
    "spill": Module(
        doc="spill's threshold, its pointer and its files",
        sources=("flower/_spill/*",),
        tests=("tests/spill",),
        pytest_args=("-m", "not cli and not slow and not long"),
    ),
    "wall": Module(
        doc="the wall: the coordinator's tools, delegation, the mandate and the report",
        sources=("flower/_wall/*",),
        tests=("tests/wall",),
        pytest_args=("-m", "not cli and not slow and not long"),
    ),
    "rewrite": Module(
        doc="layer 4's rewrites of a session before a resume",
        sources=("flower/stores/_rewrite/*",),
        tests=(
            "tests/stores/test_rewrite_branch.py",
            "tests/stores/test_rewrite_expire.py",
            "tests/stores/test_rewrite_heal.py",
            "tests/stores/test_rewrite_mend.py",
            "tests/stores/test_rewrite_files.py",
            "tests/stores/test_rewrite_loads.py",
            "tests/stores/test_rewrite_apply.py",
            "tests/stores/test_rewrite_prune.py",
            "tests/stores/test_rewrite_supersede.py",
            "tests/stores/test_rewrite_trim.py",
            "tests/stores/test_resume_shapes.py",
            "tests/stores/test_properties.py",
            "tests/stores/test_layers.py",
        ),
        pytest_args=(
            "-m",
            "not cli and not slow and not long",
            # reads every transcript of a corpus (minutes); the rewrite's own tests hold its cases
            "--deselect",
            "tests/stores/test_rewrite_mend.py::test_real_sessions_have_no_link_to_mend",
        ),
        # most of its functions are reached by the property tests (7 s a mutant): a mutant that loops
        # is stopped after about a minute of CPU, not four
        timeout_multiplier=3.0,
    ),
    "glance": Module(
        doc="glance's verdict: the parser's answer, the deny rules, the core without a jail, the wall's run",
        sources=(
            "flower/_glance/_verdict.py",
            "flower/_glance/_wall.py",
            "flower/_glance/_deny.py",
            "flower/_glance/_core.py",
        ),
        tests=(*_GLANCE_TESTS, "tests/wall/test_delegate.py", "tests/wall/test_delegate_rules.py"),
        pytest_args=("-m", "not cli and not slow and not long"),
    ),
    "glance-parser": Module(
        doc="glance's parser and its rules (from command text to the words and verbs it accepts)",
        sources=tuple(
            f"flower/_glance/_{name}.py"
            for name in (
                "source",
                "words",
                "walk",
                "paths",
                "secrets",
                "verb",
                "rules",
                "shell_rules",
                "git",
                "scripts",
            )
        ),
        tests=(*_GLANCE_TESTS, "tests/glance/test_parser.py", "tests/glance/test_parser_verbs.py"),
        pytest_args=(
            "-m",
            "not cli and not slow and not long",
            # the property tests that draw thousands of commands (three quarters of the selection's time,
            # which every surviving mutant would spend): they check that any text gets a verdict, that
            # threads and joins agree, not a rule's answer, which the tables and rows pin
            "--deselect",
            "tests/glance/test_properties.py::test_shell_like_text",
            "--deselect",
            "tests/glance/test_properties.py::test_any_text",
            "--deselect",
            "tests/glance/test_properties.py::test_any_bytes_decoded_as_a_terminal_would",
            "--deselect",
            "tests/glance/test_glance.py::test_threads_agree",
            "--deselect",
            "tests/glance/test_glance.py::test_two_glances_joined_stay_a_glance",
            "--deselect",
            "tests/glance/test_glance.py::test_a_glance_joined_with_a_refused_command_is_refused",
            # 99 levels of nesting: under mutmut's trampoline each call of the walk takes three frames,
            # past Python's recursion limit
            "--deselect",
            "tests/glance/test_files.py::test_process_substitutions_nest_as_deep_as_the_rest",
        ),
    ),
    "outbox": Module(
        doc="the outbox and the lease (its epoch fences a store's writers)",
        sources=("flower/stores/_outbox/*", "flower/stores/_lease.py"),
        tests=(
            "tests/stores/test_outbox.py",
            "tests/stores/test_outbox_reconcile.py",
            "tests/stores/test_outbox_books.py",
            "tests/stores/test_outbox_rules.py",
            "tests/stores/test_lease_rules.py",
            "tests/stores/test_fencing.py",
            "tests/fleet/test_leases.py",
        ),
        # the PostgreSQL tests start a server per session, which is per mutant here: SQLite's lease
        # and fencing tests are the killers (the same `lease.py` serves both stores)
        pytest_args=("-m", "not cli and not slow and not long", "-k", "not postgres"),
        leftovers=(":memory:",),
    ),
}


@dataclass(frozen=True, kw_only=True)
class Mutant:
    name: str
    status: str
    function: str
    change: str


@dataclass(kw_only=True)
class Score:
    module: str
    killed: int = 0
    equivalent: int = 0
    survivors: list[Mutant] = field(default_factory=list)
    not_run: int = 0
    timeouts: int = 0

    @property
    def total(self) -> int:
        return self.killed + self.equivalent + len(self.survivors) + self.not_run

    @property
    def percent(self) -> float:
        """Killed among the mutants that are not listed as equivalent."""
        decided = self.killed + len(self.survivors)
        return 100.0 * self.killed / decided if decided else 100.0


def _config(module: Module) -> str:
    def toml_list(items: tuple[str, ...]) -> str:
        return "[" + ", ".join(f'"{item}"' for item in items) + "]"

    return (
        "\n\n[tool.mutmut]\n"
        'source_paths = ["flower"]\n'
        f"only_mutate = {toml_list(module.sources)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(module.tests)}\n"
        f"pytest_add_cli_args = {toml_list(('-p', 'no:cacheprovider', *module.pytest_args))}\n"
        f"also_copy = {toml_list(module.also_copy)}\n"
        + (f"timeout_multiplier = {module.timeout_multiplier}\n" if module.timeout_multiplier else "")
    )


def _prepare(name: str, module: Module, *, fresh: bool) -> Path:
    """A work directory holding links to the package and the tests, and the project's configuration with
    mutmut's for this module appended (mutmut reads `[tool.mutmut]` from the working directory)."""
    work = WORK / name
    if fresh and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for linked in ("flower", "tests", *module.also_copy):
        link = work / linked
        if not link.is_symlink():
            link.symlink_to(ROOT / linked, target_is_directory=True)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (work / "pyproject.toml").write_text(pyproject + _config(module), encoding="utf-8")
    return work


def _statuses(work: Path) -> dict[str, str]:
    out = subprocess.run(
        [*MUTMUT, "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    statuses: dict[str, str] = {}
    for line in out.splitlines():
        mutant, sep, status = line.strip().rpartition(": ")
        if sep and mutant.startswith("flower."):
            statuses[mutant] = status
    return statuses


def _functions(path: Path) -> dict[str, str]:
    """Every function of a file mutmut wrote, by name, as source text."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "__mutmut_" in node.name:
            # whole lines (ast.get_source_segment splits the whole file again for every function)
            found[node.name] = "\n".join(lines[node.lineno - 1 : node.end_lineno])
    return found


def _change(functions: dict[str, str], short: str) -> str:
    """The lines a mutant removed and added, stripped of indentation, as `- old` / `+ new` lines."""
    stem = short.rsplit("__mutmut_", 1)[0]
    name = stem.rsplit("ǁ", 1)[-1] if "ǁ" in stem else stem.removeprefix("x_")  # the name in the source
    original = functions.get(f"{stem}__mutmut_orig", "").replace(f"{stem}__mutmut_orig", name, 1).splitlines()
    mutated = functions.get(short, "").replace(short, name, 1).splitlines()
    lines = [
        f"{line[0]} {line[1:].strip()}"
        for line in difflib.unified_diff(original, mutated, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return "\n".join(lines)


def _mutants(work: Path, statuses: dict[str, str]) -> list[Mutant]:
    files: dict[Path, dict[str, str]] = {}
    mutants = []
    for name, status in sorted(statuses.items()):
        module_path, _, short = name.rpartition(".")
        # a method's mangled name holds no dot; a package's __init__ is named without it by mutmut
        path = work / "mutants" / (module_path.replace(".", "/") + ".py")
        if not path.exists():
            path = work / "mutants" / module_path.replace(".", "/") / "__init__.py"
        if path not in files:
            files[path] = _functions(path) if path.exists() else {}
        change = _change(files[path], short) if status not in KILLED else ""
        function = f"{module_path}.{short.rsplit('__mutmut_', 1)[0]}"
        mutants.append(Mutant(name=name, status=status, function=function, change=change))
    return mutants


def _equivalents() -> list[dict[str, str]]:
    if not EQUIVALENT_FILE.exists():
        return []
    entries = tomllib.loads(EQUIVALENT_FILE.read_text(encoding="utf-8")).get("equivalent", [])
    for number, entry in enumerate(entries, 1):
        missing = {"function", "reason"} - set(entry)
        if missing or ("change" in entry) == ("match" in entry):
            lacks = ", ".join(sorted(missing)) or "exactly one of change and match"
            raise SystemExit(f"{EQUIVALENT_FILE.name}: entry {number} needs {lacks}")
    return list(entries)


def _case_only(change: str) -> bool:
    """Whether a change only changed the case of letters (as in SQL text, which ignores it)."""
    removed = [line[2:] for line in change.splitlines() if line.startswith("- ")]
    added = [line[2:] for line in change.splitlines() if line.startswith("+ ")]
    return bool(removed) and removed != added and [r.lower() for r in removed] == [a.lower() for a in added]


def _normal(change: str) -> str:
    return "\n".join(line.strip() for line in change.strip().splitlines())


def _score(name: str, mutants: list[Mutant], entries: list[dict[str, str]], used: set[int]) -> Score:
    listed = {
        (entry["function"], _normal(entry["change"])): index
        for index, entry in enumerate(entries)
        if "change" in entry
    }
    # `change = "*"`: every mutant of the function (one that runs only at import, before mutmut switches
    # a mutant on)
    whole = {entry["function"]: index for index, entry in enumerate(entries) if entry.get("change") == "*"}
    # `match`: a regular expression over the change, for one kind of change wherever it is (`function` a
    # glob): `typing.cast(None, x)` is x
    kinds = [(index, entry) for index, entry in enumerate(entries) if "match" in entry]
    score = Score(module=name)
    for mutant in mutants:
        if mutant.status in KILLED:
            score.killed += 1
            score.timeouts += mutant.status == "timeout"
            continue
        if mutant.status in NOT_RUN:  # a pass stopped early: neither killed nor survived
            score.not_run += 1
            continue
        index = listed.get((mutant.function, _normal(mutant.change)), whole.get(mutant.function))
        if index is None:
            index = next(
                (
                    number
                    for number, entry in kinds
                    if fnmatch.fnmatchcase(mutant.function, entry["function"])
                    and re.search(entry["match"], mutant.change)
                    and (not entry.get("case_only") or _case_only(mutant.change))
                ),
                None,
            )
        if index is not None:
            score.equivalent += 1
            used.add(index)
        else:
            score.survivors.append(mutant)
    return score


def _mutmut(name: str, work: Path, jobs: int, names: list[str], log: Path) -> None:
    for leftover in MODULES[name].leftovers:
        (work / "mutants" / leftover).unlink(missing_ok=True)
    command = [*MUTMUT, "run", "--max-children", str(jobs), *names]
    with log.open("a", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=work, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"mutmut failed on {name} (exit {done.returncode}); the end of {log}:\n{tail}")


def _run(name: str, module: Module, *, jobs: int, fresh: bool, recheck: bool) -> list[Mutant]:
    work = _prepare(name, module, fresh=fresh)
    print(f"== {name}: {module.doc}; mutating {', '.join(module.sources)} (work: {work})", flush=True)
    log = work / "mutmut.log"
    log.write_text("", encoding="utf-8")
    # mutmut keeps a mutant's result while its function is unchanged, even when the tests changed: a
    # recheck marks the survivors of the last pass as not run, then runs every mutant not run yet
    # (those of what changed among them)
    survivors = []
    if recheck and (work / "mutants").exists():
        survivors = [m for m, status in _statuses(work).items() if status not in KILLED | NOT_RUN]
        _forget_test_timings(work)
    if survivors:
        print(f"   rechecking the {len(survivors)} mutants that survived the last pass", flush=True)
        _forget_results(work, set(survivors))
    _mutmut(name, work, jobs, [], log)
    return _mutants(work, _statuses(work))


def _forget_results(work: Path, names: set[str]) -> None:
    """Mark the mutants `names` as not run yet, so that the pass runs them again.

    (Naming them to `mutmut run` instead makes mutmut name the tests that reach them on pytest's
    command line for its clean run, and pytest cannot find a parametrized test whose id holds a
    backslash.)"""
    for meta in (work / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data.get("exit_code_by_key", {})
        forgotten = [key for key in codes if key in names]
        for key in forgotten:
            codes[key] = None
        if forgotten:
            meta.write_text(json.dumps(data), encoding="utf-8")


def _forget_test_timings(work: Path) -> None:
    """Make mutmut trace every test again before the pass.

    mutmut traces which test reaches which function once, then only for tests added since; a function
    added or renamed since (a merge) would stay reached by no test ("no tests") however well tested.
    The trace file goes, so mutmut traces the module's tests as a clean run does (one run of its test
    selection); its kept results stay. (Marking every test as new instead makes mutmut name each test on
    pytest's command line, which cannot find a test whose id holds a backslash.)"""
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--module",
        default=",".join(MODULES),
        help=f"comma-separated modules to mutate (default: all of {', '.join(MODULES)})",
    )
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default: 2)")
    parser.add_argument("--nice", type=int, default=10, help="priority increment of the pass (default: 10)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the results of an earlier pass on functions that did not change (default: start afresh)",
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="--resume, then run the survivors of the earlier pass again, against the tests as they are now",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="print the scores of the last pass without running one"
    )
    args = parser.parse_args(argv)
    names = [part.strip() for part in args.module.split(",") if part.strip()]
    unknown = [part for part in names if part not in MODULES]
    if unknown:
        parser.error(f"--module: unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}")
    if args.jobs < 1:
        parser.error(f"--jobs must be 1 or more, not {args.jobs}")
    # to the priority asked, not below it (`nice -n 10 python tools/mutation.py` is the same pass)
    os.nice(max(0, args.nice - os.nice(0)))

    entries = _equivalents()
    used: set[int] = set()
    scores = []
    for name in names:
        module = MODULES[name]
        if args.report_only:
            work = WORK / name
            if not (work / "mutants").exists():
                print(f"== {name}: no earlier pass in {work}", file=sys.stderr)
                continue
            mutants = _mutants(work, _statuses(work))
        else:
            mutants = _run(
                name, module, jobs=args.jobs, fresh=not (args.resume or args.recheck), recheck=args.recheck
            )
        scores.append(_score(name, mutants, entries, used))

    for score in scores:
        if not score.survivors:
            continue
        print(f"\n-- {score.module}: {len(score.survivors)} survivor(s)")
        for mutant in score.survivors:
            print(f"{mutant.name} ({mutant.status})")
            for line in mutant.change.splitlines():
                print(f"    {line}")

    print(
        f"\n{'module':<10} {'mutants':>8} {'killed':>7} {'equivalent':>11} {'survived':>9} {'not run':>8} "
        f"{'score':>7}"
    )
    for score in scores:
        print(
            f"{score.module:<10} {score.total:>8} {score.killed:>7} {score.equivalent:>11} "
            f"{len(score.survivors):>9} {score.not_run:>8} {score.percent:>6.1f}%"
        )
    print("score: killed / (killed + survived); a mutant listed as equivalent cannot be killed")
    for score in scores:
        print(
            f"{score.module}: {score.killed} killed"
            + (f" ({score.timeouts} by a timeout)" if score.timeouts else "")
            + f", {score.equivalent} equivalent (listed), {len(score.survivors)} survived"
            + (f", {score.not_run} not run (the pass stopped early)" if score.not_run else "")
        )
    modules = {name for name in names}
    stale = [
        entry
        for index, entry in enumerate(entries)
        if index not in used and entry["function"].split(".x", 1)[0].startswith(_prefixes(modules))
    ]
    for entry in stale:
        what = entry.get("change") or entry.get("match")
        print(f"stale entry in {EQUIVALENT_FILE.name}: {entry['function']}: {what!r}")
    return 0


def _prefixes(names: set[str]) -> tuple[str, ...]:
    prefixes = []
    for name in names:
        for source in MODULES[name].sources:
            prefixes.append(source.split("*", 1)[0].removesuffix(".py").replace("/", "."))
    return tuple(prefixes)


if __name__ == "__main__":
    raise SystemExit(main())
