"""The command line in issue 26's fault fuzzing: ``explain`` and ``report`` with bad data files, bad options and
output paths that are links, folders or existing files, each run in-process through
:func:`shap_instances.cli.main` and classified with the categories of :mod:`tests.fuzz_faults`.

A run that exits 0 is a **right answer** when its output is whole (the values table has one row per explained row
and finite values; the report's ``index.html`` exists) and the case allows an answer; **silently wrong** otherwise
(an output that is not whole, or a file the command should have refused). Exit 2 with one ``error:`` line on stderr
(argparse's usage errors included) is a **clear error**; exit 1 (the command's "internal error") or an escaping
exception an **obscure crash**. After every case the user's files (the data files, files kept in output folders)
are compared with their bytes before: a change is **data loss**.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from .fuzz_faults import Hang, _crash, _time_limit

#: The explainers run on every data file ("auto" and each registered name).
EXPLAINERS = ("auto", "boosting", "gap", "instance_kernel", "isotonic", "knn_shapley", "loo", "naive_bayes",
              "representer")


def _frame(rng: np.random.Generator, n: int = 20) -> pd.DataFrame:
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    frame["t"] = 2 * frame["a"] - frame["b"] + rng.normal(scale=0.3, size=n)
    return frame


def data_files(folder: Path, rng: np.random.Generator) -> dict[str, tuple[Path, bool]]:
    """Data files: name -> (path, must the commands refuse it whatever the options)."""
    base = _frame(rng)
    labels = base.assign(t=(base["t"] > 0).astype(int))
    texts: dict[str, tuple[str | bytes, bool]] = {
        "regression": (base.to_csv(index=False), False),
        "classes": (labels.to_csv(index=False), False),
        "string feature": (base.assign(c=np.where(base["c"] > 0, "red", "blue")).to_csv(index=False), False),
        "string target": (labels.assign(t=np.where(labels["t"] == 1, "yes", "no")).to_csv(index=False), False),
        "three string classes": (base.assign(t=np.array(["lo", "mid", "hi"])[np.arange(len(base)) % 3]
                                             ).to_csv(index=False), False),
        "bool target": (labels.assign(t=labels["t"] == 1).to_csv(index=False), False),
        "NaN feature": (base.assign(a=base["a"].where(base.index != 3)).to_csv(index=False), True),
        "NaN target": (base.assign(t=base["t"].where(base.index != 5)).to_csv(index=False), True),
        "infinite feature": (base.assign(b=base["b"].where(base.index != 4, np.inf)).to_csv(index=False), True),
        "huge feature": (base.assign(c=base["c"] * 1e198).to_csv(index=False), True),
        "huge target": (base.assign(t=base["t"] * 1e300).to_csv(index=False), False),
        "duplicated columns": (base.to_csv(index=False).replace("a,b,c,t", "a,a,c,t", 1), True),
        "empty file": ("", True),
        "header only": ("a,b,c,t\n", True),
        "one row": (base.iloc[:1].to_csv(index=False), True),
        "two rows": (base.iloc[:2].to_csv(index=False), False),
        "one class": (labels.assign(t=1).to_csv(index=False), True),
        "constant feature": (base.assign(b=1.0).to_csv(index=False), False),
        "garbage": (bytes(range(256)) * 4, True),
        "no target column": (base.rename(columns={"t": "u"}).to_csv(index=False), True),
        "only strings": (labels.assign(a="x", b="y", c=np.where(base["c"] > 0, "p", "q")).to_csv(index=False),
                         False),
        "ragged rows": (base.to_csv(index=False) + "1,2\n3,4,5,6,7,8\n", True),
    }
    files = {}
    for k, (name, (text, refuse)) in enumerate(texts.items()):
        path = folder / f"data-{k}.csv"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        files[name] = (path, refuse)
    return files


def _fingerprints(paths: list[Path]) -> dict[Path, str | None]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None for p in paths}


def run_command(argv: list[str], *, kept: list[Path], check: Callable[[], bool], must_refuse: bool,
                messages: list[str] | None = None) -> str:
    """One command line's outcome; ``kept`` are the user's files that must not change, ``check`` says whether a
    run that exited 0 left a whole output; the lines the command wrote to stderr are added to ``messages``."""
    from shap_instances.cli import main

    before = _fingerprints(kept)
    stderr = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        warnings.simplefilter("ignore")
        try:
            with _time_limit(_hang_seconds()):
                code = main(argv)
        except SystemExit as exc:  # argparse: usage errors exit 2
            code = exc.code if isinstance(exc.code, int) else 1
        except Hang:
            return "hang"
        except MemoryError:
            return "memory failure"
        except Exception as exc:  # noqa: BLE001 - anything escaping main is an obscure crash
            return _crash(exc)
    if messages is not None:
        messages.extend(stderr.getvalue().splitlines())
    if _fingerprints(kept) != before:
        return "data loss"
    lines = [line for line in stderr.getvalue().splitlines() if "error:" in line]
    if code == 0:
        return "silently wrong" if must_refuse or not check() else "right answer"
    if code == 2 and lines and "internal error" not in lines[-1]:
        return "clear error"
    return _crash(RuntimeError(f"exit {code}: {stderr.getvalue().strip()[-300:]}"))


def _hang_seconds() -> float:
    from . import fuzz_faults

    return fuzz_faults.HANG_SECONDS


def _whole_table(out: Path, rows: int) -> Callable[[], bool]:
    def check() -> bool:
        if not out.is_file():
            return False
        table = pd.read_csv(out, index_col=0) if out.suffix == ".csv" else pd.read_parquet(out)
        values = table.to_numpy(dtype=np.float64)
        return table.shape[0] == rows and table.shape[1] >= 2 and bool(np.all(np.isfinite(values)))
    return check


def _whole_report(out: Path) -> Callable[[], bool]:
    return lambda: (out / "index.html").is_file()


def _explained_rows(path: Path, rows: int) -> int:
    try:
        return min(rows, len(pd.read_csv(path).dropna()))
    except Exception:  # noqa: BLE001 - a file the command must refuse anyway
        return rows


def data_cases(folder: Path, files: dict[str, tuple[Path, bool]], *, report: bool) -> Iterator[tuple[str, str]]:
    """Every data file through ``explain`` with each explainer (and ``report`` when asked)."""
    kept = [path for path, _ in files.values()]
    for k, (name, (path, refuse)) in enumerate(files.items()):
        for explainer in EXPLAINERS:
            out = folder / f"out-{k}-{explainer}.csv"
            argv = ["explain", "--data", str(path), "--target", "t", "--explainer", explainer, "--rows", "2",
                    "--out", str(out)]
            check = _whole_table(out, _explained_rows(path, 2))
            yield f"cli data {name} explain {explainer}", run_command(argv, kept=kept, check=check,
                                                                      must_refuse=refuse)
        if report and refuse:  # a file the report accepts costs a whole report: the option cases run two of those
            out = folder / f"report-{k}"
            argv = ["report", "--data", str(path), "--target", "t", "--out", str(out), "--silent",
                    "--time-budget", "5"]
            yield f"cli data {name} report", run_command(argv, kept=kept, check=_whole_report(out),
                                                         must_refuse=refuse)


def option_cases(folder: Path, files: dict[str, tuple[Path, bool]]) -> Iterator[tuple[str, str]]:
    """Bad options (and a few good ones) of both commands on a good data file."""
    data, _ = files["classes"]
    nan_data, _ = files["NaN feature"]
    kept = [path for path, _ in files.values()]
    explain = ["explain", "--data", str(data), "--target", "t"]
    report = ["report", "--data", str(data), "--target", "t", "--silent"]
    cases: dict[str, tuple[list[str], bool, int]] = {  # name -> (arguments, must refuse, rows explained)
        "rows 0": ([*explain, "--rows", "0"], True, 0),
        "rows -3": ([*explain, "--rows", "-3"], True, 0),
        "rows not a number": ([*explain, "--rows", "many"], True, 0),
        "rows above n": ([*explain, "--rows", "1000", "--explainer", "representer"], False, 20),
        "negative seed": ([*explain, "--seed", "-1", "--rows", "2"], False, 2),
        "huge seed": ([*explain, "--seed", str(2**80), "--rows", "2"], False, 2),
        "task regression on classes": ([*explain, "--task", "regression", "--rows", "2"], False, 2),
        "task classification on floats": (["explain", "--data", str(files["regression"][0]), "--target", "t",
                                           "--task", "classification"], True, 0),
        "task unknown": ([*explain, "--task", "ranking"], True, 0),
        "model unknown": ([*explain, "--model", "oracle"], True, 0),
        "explainer unknown": ([*explain, "--explainer", "oracle"], True, 0),
        "explainer empty": ([*explain, "--explainer", ""], True, 0),
        "format unknown": ([*explain, "--format", "tall"], True, 0),
        "top-k 0": ([*explain, "--explain", str(data), "--top-k", "0"], True, 0),
        "explain missing file": ([*explain, "--explain", str(folder / "nowhere.csv")], True, 0),
        "explain a text file": ([*explain, "--explain", str(folder / "notes.txt")], True, 0),
        "block size 0": ([*explain, "--explain", str(data), "--block-size", "0"], True, 0),
        "max-memory 0": ([*explain, "--explain", str(data), "--max-memory", "0"], True, 0),
        "max-memory nan": ([*explain, "--explain", str(data), "--max-memory", "nan"], True, 0),
        "out suffix txt": ([*explain, "--rows", "2", "--out", str(folder / "o.txt")], True, 0),
        "out missing parent": ([*explain, "--rows", "2", "--out", str(folder / "no" / "o.csv")], True, 0),
        "target without data": (["explain", "--target", "t"], True, 0),
        "data without target": (["explain", "--data", str(data)], True, 0),
        "data missing": (["explain", "--data", str(folder / "nowhere.csv"), "--target", "t"], True, 0),
        "data a folder": (["explain", "--data", str(folder), "--target", "t"], True, 0),
        "dropna": (["explain", "--data", str(nan_data), "--target", "t", "--dropna", "--rows", "2"], False, 2),
        "no command": ([], True, 0),
        "unknown command": (["explain-all"], True, 0),
        "report time budget 0": ([*report, "--time-budget", "0"], True, 0),
        "report time budget -5": ([*report, "--time-budget", "-5"], True, 0),
        "report time budget nan": ([*report, "--time-budget", "nan"], True, 0),
        "report time budget inf": ([*report, "--time-budget", "inf", "--max-memory", "0"], True, 0),
        "report max-memory -1": ([*report, "--max-memory", "-1"], True, 0),
        "report max-memory nan": ([*report, "--max-memory", "nan"], True, 0),
        "report max-memory 1e-9": ([*report, "--max-memory", "1e-9", "--time-budget", "5"], True, 0),
        "report model unknown": ([*report, "--model", "oracle"], True, 0),
        "report seed not a number": ([*report, "--seed", "x"], True, 0),
        "report": ([*report, "--time-budget", "5"], False, 0),
        "report string target": (["report", "--data", str(files["string target"][0]), "--target", "t", "--silent",
                                  "--time-budget", "5"], False, 0),
    }
    (folder / "notes.txt").write_text("not data\n")
    for k, (name, (argv, refuse, rows)) in enumerate(cases.items()):
        if argv[:1] == ["explain"] and "--out" not in argv:
            argv = [*argv, "--out", str(folder / f"option-{k}.csv")]
        if argv[:1] == ["report"]:
            argv = [*argv, "--out", str(folder / f"option-report-{k}")]
        out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else folder / "none"
        check = _whole_report(out) if argv[:1] == ["report"] else _whole_table(out, rows)
        yield f"cli option {name}", run_command(argv, kept=kept, check=check, must_refuse=refuse)


def _output_targets(folder: Path, data: Path, k: int, suffix: str) -> dict[str, tuple[Path, list[Path], bool]]:
    """Output paths (names ending in ``suffix``): name -> (the --out path, the user's files there that must be
    kept, must refuse)."""
    base = folder / f"outputs-{k}"
    base.mkdir()
    made: dict[str, tuple[Path, list[Path], bool]] = {}

    def keep(path: Path, text: str = "the user's file\n") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    (base / f"symlink{suffix}").symlink_to(data)
    made["a symbolic link to the data"] = (base / f"symlink{suffix}", [], True)
    os.link(data, base / f"hardlink{suffix}")
    made["a hard link to the data"] = (base / f"hardlink{suffix}", [], True)
    made["the data itself"] = (data, [], True)
    made["an existing file"] = (base / f"existing{suffix}", [keep(base / f"existing{suffix}")], True)
    made["an existing folder"] = (base / f"folder{suffix}", [keep(base / f"folder{suffix}" / "keep.txt")], True)
    made["an empty folder"] = (base / f"empty{suffix}", [], bool(suffix))  # explain writes a file
    (base / f"empty{suffix}").mkdir()
    site = keep(base / f"site{suffix}" / "index.html", "<p>mine</p>")
    made["a folder with an index.html"] = (site.parent, [site], True)
    (base / f"dangling{suffix}").symlink_to(base / "nowhere")
    made["a dangling link"] = (base / f"dangling{suffix}", [], False)
    made["a link to a folder"] = (base / f"folderlink{suffix}", [keep(base / f"real{suffix}" / "keep.txt")],
                                  True)
    (base / f"folderlink{suffix}").symlink_to(base / f"real{suffix}")
    made["a folder holding the data"] = (data.parent, [], True)
    return made


def output_cases(folder: Path, files: dict[str, tuple[Path, bool]],
                 commands: tuple[str, ...] = ("explain", "report")) -> Iterator[tuple[str, str]]:
    """``--out`` as links, folders and existing files, for both commands, with and without ``--force``."""
    kept = [path for path, _ in files.values()]
    source, _ = files["classes"]
    k = 0
    for command in commands:
        for force in ((), ("--force",)):
            k += 1
            data = folder / f"input-{k}" / "d.csv"  # a copy per round: the folder-holding-the-data case needs one
            data.parent.mkdir()
            data.write_bytes(source.read_bytes())
            suffix = ".csv" if command == "explain" else ""
            for name, (out, mine, refuse) in _output_targets(folder, data, k, suffix).items():
                if command == "explain" and name == "an existing file" and force:
                    mine, refuse = [], False  # explain --force overwrites an existing file, as its --help says
                if force and name in ("a link to a folder", "an existing folder"):  # explain --force replaces the
                    refuse = command == "explain" and name == "an existing folder"  # link; report adds its files
                argv = [command, "--data", str(data), "--target", "t", "--out", str(out), *force]
                argv += ["--rows", "2", "--explainer", "representer"] if command == "explain" else \
                    ["--silent", "--time-budget", "5"]
                check = _whole_report(out) if command == "report" else _whole_table(out, 2)
                outcome = run_command(argv, kept=[*kept, data, *mine], check=check, must_refuse=refuse)
                yield f"cli output {command}{' --force' if force else ''} {name}", outcome


def cli_cases(folder: Path, rng: np.random.Generator, *, report: bool = True) -> Iterator[tuple[str, str]]:
    """Every command-line case: the data files, the options, the output paths."""
    folder.mkdir()
    files = data_files(folder, rng)
    yield from data_cases(folder, files, report=report)
    yield from option_cases(folder, files)
    yield from output_cases(folder, files)
