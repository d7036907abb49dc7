"""The command line: bad input gives one line and exit code 2, never a traceback."""

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from shap_instances.cli import main


@pytest.fixture
def csv(tmp_path):
    def write(frame, name="data.csv"):
        path = tmp_path / name
        frame.to_csv(path, index=False)
        return str(path)

    return write


def _frame(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "y": rng.normal(size=n)})


@pytest.mark.parametrize(
    "mutate, target, message",
    [
        (lambda f: f, "missing", "target column 'missing' is not in"),
        (lambda f: f.assign(a=[np.nan] + list(f.a[1:])), "y", "missing values in column(s) a"),
    ],
)
def test_bad_data_is_one_line_exit_2(csv, capsys, mutate, target, message, tmp_path):
    path = csv(mutate(_frame()))
    code = main(["explain", "--data", path, "--target", target, "--out", str(tmp_path / "v.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_missing_file(capsys, tmp_path):
    assert main(["report", "--data", str(tmp_path / "nope.csv"), "--target", "y"]) == 2
    assert "no such data file" in capsys.readouterr().err


def test_data_without_target(capsys, csv):
    assert main(["explain", "--data", csv(_frame()), "--out", "x.csv"]) == 2
    assert "--data needs --target" in capsys.readouterr().err


def test_console_script_has_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "shap_instances.cli", "explain", "--data", str(tmp_path / "x.csv"), "--target", "y",
         "--out", "o.csv"], capture_output=True, text=True,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_list_shows_builtins_and_the_plugin(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("gap", "naive_bayes", "instance_kernel", "isotonic", "knn_shapley"):
        assert name in out
    assert "plugin (shap_instances_knn)" in out


def test_explain_writes_values(tmp_path):
    out = tmp_path / "values.csv"
    assert main(["explain", "--model", "forest", "--rows", "4", "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    assert table.shape == (4, 1 + 442)  # the base value, then one column per training row


def test_explain_writes_parquet(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow is in the parquet extra (installed by scripts/setup.sh)")
    out = tmp_path / "values.parquet"
    assert main(["explain", "--model", "forest", "--rows", "3", "--out", str(out)]) == 0
    assert pd.read_parquet(out).shape == (3, 1 + 442)


def test_explain_checks_the_output_name_before_working(capsys, tmp_path):
    assert main(["explain", "--rows", "2", "--out", str(tmp_path / "values.xlsx")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ".csv or .parquet" in err


def _player_sum(table, output=None):
    """Row sums of the value columns (of one output in the multi-output layout ``player|output``)."""
    columns = [c for c in table.columns if not c.startswith("base_value")]
    if output is not None:
        columns = [c for c in columns if c.endswith(f"|{output}")]
    return table[columns].to_numpy().sum(axis=1)


def test_explain_single_output_keeps_one_base_value_and_is_efficient(tmp_path):
    from shap_instances.datasets import load_diabetes
    from shap_instances.report import fit_model

    out = tmp_path / "values.csv"
    assert main(["explain", "--model", "forest", "--rows", "5", "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    assert [c for c in table.columns if c.startswith("base_value")] == ["base_value"]
    X, y = load_diabetes()
    prediction = fit_model("forest", "regression", X, y, 0).predict(X.iloc[:5])
    np.testing.assert_allclose(table["base_value"] + _player_sum(table), prediction, atol=1e-8)


def test_explain_multi_output_writes_one_base_value_per_output(csv, tmp_path):
    from sklearn.datasets import load_iris

    from shap_instances.report import fit_model

    X, y = load_iris(return_X_y=True, as_frame=True)
    keep = np.r_[0:50, 50:80, 100:115]  # unequal classes: the three base values differ
    frame = X.iloc[keep].assign(species=np.array(["setosa", "versicolor", "virginica"])[y.iloc[keep]])
    out = tmp_path / "values.csv"
    assert main(["explain", "--data", csv(frame), "--target", "species", "--model", "forest", "--rows", "6",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    model = fit_model("forest", "classification", frame.drop(columns="species"), frame["species"], 0)
    outputs = [str(c) for c in model.classes_]
    assert list(table.columns[:3]) == [f"base_value|{o}" for o in outputs]
    assert table.shape == (6, 3 + 3 * len(frame))
    assert np.ptp(table.iloc[0, :3].to_numpy()) > 0.1  # not output 0's base value repeated
    probabilities = model.predict_proba(frame.drop(columns="species").iloc[:6])
    for k, o in enumerate(outputs):
        np.testing.assert_allclose(table[f"base_value|{o}"] + _player_sum(table, o), probabilities[:, k], atol=1e-8)


@pytest.mark.parametrize("rows", ["-3", "0"])
def test_explain_rows_must_be_positive(capsys, tmp_path, rows):
    out = tmp_path / "values.csv"
    assert main(["explain", "--rows", rows, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--rows: the value must be an int in [1, " in err and f"got '{rows}'" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and "shap-instances" in capsys.readouterr().out


def test_out_never_destroys_the_input_or_other_files(capsys, tmp_path):
    path = tmp_path / "input.csv"
    path.write_text("a,b,y\n1,2,1.5\n2,3,2.5\n3,5,3.5\n")
    assert main(["explain", "--data", str(path), "--target", "y", "--out", str(path)]) == 2
    assert "is the input file" in capsys.readouterr().err and path.read_text().startswith("a,")
    existing = tmp_path / "values.csv"
    existing.write_text("keep me")
    assert main(["explain", "--out", str(existing)]) == 2
    assert "--force" in capsys.readouterr().err and existing.read_text() == "keep me"
    assert main(["explain", "--out", str(existing), "--force"]) == 0
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "thesis.txt").write_text("precious")
    assert main(["report", "--out", str(folder), "--silent"]) == 2
    assert "something other than a shap-instances report" in capsys.readouterr().err
    assert (folder / "thesis.txt").read_text() == "precious"


@pytest.mark.slow
def test_interrupted_report_leaves_no_half_report(monkeypatch, tmp_path, capsys):
    from shap_instances.report import _html

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_html.Report, "to_html", interrupted)
    out = tmp_path / "report"
    assert main(["report", "--out", str(out), "--silent", "--time-budget", "60"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())  # no staging folder left behind


def test_every_problem_of_a_file_at_once_and_dropna_summary(tmp_path, capsys):
    path = tmp_path / "mixed.csv"
    path.write_text("a,b,c,y\n1,x,3,1.5\n2,y,,2.5\n3,z,5,3.5\n")
    assert main(["explain", "--data", str(path), "--target", "y", "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "missing values in column(s) c (1 rows)" in err and "non-numeric" not in err  # strings are encoded
    path.write_text("a,b,y\n1,2,1.5\n2,,2.5\n3,4,3.5\n4,5,1.0\n")
    assert main(["explain", "--data", str(path), "--target", "y", "--dropna", "--model", "ridge",
                 "--out", str(tmp_path / "o.csv")]) == 0
    assert "dropped 1 of 4 rows" in capsys.readouterr().err


@pytest.mark.parametrize("content, args, message", [
    ("a,b,y\n", [], "but no rows"),
    ("a,b,y\n1,2,1.5\n2,3,1.5\n3,4,1.5\n", [], "is constant"),
    ("a,b,y\n1,2,cat\n2,3,dog\n3,4,cat\n", ["--task", "regression"], "needs a numeric target"),
])
def test_target_and_file_messages(tmp_path, capsys, content, args, message):
    path = tmp_path / "t.csv"
    path.write_text(content)
    assert main(["explain", "--data", str(path), "--target", "y", *args, "--out", str(tmp_path / "o.csv")]) == 2
    assert message in capsys.readouterr().err


def test_target_without_data_is_an_error(capsys, tmp_path):
    assert main(["explain", "--target", "y", "--out", str(tmp_path / "o.csv")]) == 2
    assert "--target y needs --data" in capsys.readouterr().err


def test_string_columns_are_one_hot_encoded_and_named(csv, tmp_path):
    frame = _frame(40).assign(colour=np.resize(["red", "green", "blue"], 40))
    out = tmp_path / "values.csv"
    assert main(["explain", "--data", csv(frame), "--target", "y", "--explainer", "instance_kernel", "--rows", "3",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    assert table.shape == (3, 1 + 40)  # the players are the 40 training rows, whatever the encoding

    labels = frame.assign(y=np.where(frame.y > 0, "high", "low"))
    assert main(["explain", "--data", csv(labels, "labels.csv"), "--target", "y", "--explainer", "naive_bayes",
                 "--rows", "3", "--out", str(out), "--force"]) == 0
    table = pd.read_csv(out, index_col=0)
    # naive Bayes works per feature and gets the whole pipeline: its attributions name the original columns
    players = dict.fromkeys(c.split("|")[0] for c in table.columns if not c.startswith("base_value"))
    assert list(players) == ["a", "b", "colour"]


@pytest.mark.parametrize("explainer, explainer_class", [
    ("gap", "GapExplainer"), ("knn_shapley", "KNNShapleyExplainer"), ("representer", "RepresenterExplainer"),
    ("instance_kernel", "InstanceKernelExplainer"), ("boosting", "BoostingExplainer"),
])
def test_model_auto_fits_what_the_explainer_supports(tmp_path, capsys, explainer, explainer_class):
    out = tmp_path / "values.csv"
    assert main(["explain", "--explainer", explainer, "--rows", "2", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"{explainer_class}: 2 rows x 442 players")
    assert pd.read_csv(out, index_col=0).shape == (2, 1 + 442)


@pytest.mark.parametrize("model", ["boosting", pytest.param("xgboost", marks=pytest.mark.slow),
                                   pytest.param("lightgbm", marks=pytest.mark.slow)])
def test_model_boosting_reaches_the_boosting_explainer(csv, tmp_path, model):
    pytest.importorskip("xgboost" if model == "xgboost" else "lightgbm" if model == "lightgbm" else "sklearn")
    out = tmp_path / "values.csv"
    frame = _frame(n=200).assign(y=lambda f: (f.y > 0).astype(int))  # string targets: issue 26
    assert main(["explain", "--data", csv(frame), "--target", "y", "--explainer", "boosting", "--model", model,
                 "--rows", "2", "--out", str(out)]) == 0
    assert pd.read_csv(out, index_col=0).shape[0] == 2


def test_model_auto_naive_bayes_on_a_classification_csv(csv, tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    out = tmp_path / "values.csv"
    assert main(["explain", "--data", csv(X.iloc[:, :5].assign(label=y)), "--target", "label",
                 "--explainer", "naive_bayes", "--rows", "2", "--out", str(out)]) == 0
    assert list(pd.read_csv(out, index_col=0).columns[1:]) == list(X.columns[:5])


@pytest.mark.parametrize("args, hint", [
    (["--explainer", "gap", "--model", "ridge"], "Use --model forest"),
    (["--explainer", "knn_shapley", "--model", "forest"], "Use --model knn"),
    (["--explainer", "representer", "--model", "forest"], "Use --model ridge"),
    (["--explainer", "naive_bayes"], "--task classification"),
])
def test_impossible_pair_points_to_model(tmp_path, capsys, args, hint):
    assert main(["explain", *args, "--rows", "2", "--out", str(tmp_path / "v.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hint in err and "Python" not in err and "shap_instances." not in err


@pytest.mark.parametrize("budget", ["0", "-5"])
def test_time_budget_must_be_positive(capsys, tmp_path, budget):
    assert main(["report", "--out", str(tmp_path / "r"), "--time-budget", budget]) == 2
    assert "--time-budget: the value must be a finite number in [1, 2592000] (seconds" in capsys.readouterr().err


@pytest.mark.slow
def test_report_prints_its_plan_and_a_bar_per_section(csv, tmp_path, capsys):
    frame = _frame(160).assign(colour=np.resize(["red", "green", "blue"], 160))
    assert main(["report", "--data", csv(frame), "--target", "y", "--time-budget", "60",
                 "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err.replace("\r", "\n")
    lines = err.splitlines()
    assert lines[0].startswith("plan for a ") and "one permutation of the aggregate game" in lines[0]
    # the residual decomposition runs last (it takes the time the others leave), and the plan lists it so
    for number, name in enumerate(["overview", "representer points", "random forest", "residual decomposition"],
                                  start=1):
        plan_line = next(line for line in lines if line.startswith(f"  [{number}/4] {name}"))
        assert re.search(r"\d+%\s+~\s*\d+ s  \S", plan_line), plan_line  # share, estimate, what
        assert any(line.startswith(f"[{number}/4] {name}: 100%") for line in lines)  # its progress bar ran
    assert "planned total" in err and (tmp_path / "r" / "index.html").is_file()


@pytest.mark.parametrize("content, args, message", [
    ("a,b,y\n1,inf,1.5\n2,3,2.5\n3,4,3.5\n", [], "infinite values in column(s) b (1 rows)"),
    ("a,b,y\n1,2,inf\n2,3,2.5\n3,4,3.5\n", [], "infinite values in column(s) y (1 rows)"),
    ("a,b,y\n1,2,1.25\n2,3,2.5\n3,4,3.5\n", ["--task", "classification"], "holds continuous values such as 1.25"),
    ("a,b,y\n1,2,1.5\n2,3,1.5\n3,4,1.5\n", [], "is constant (1.5)"),
])
def test_more_file_messages_in_the_users_words(tmp_path, capsys, content, args, message):
    path = tmp_path / "t.csv"
    path.write_text(content)
    assert main(["explain", "--data", str(path), "--target", "y", *args, "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("cost, expected", [
    (lambda n: 2.0 + 0.001 * n, 2.0 + 0.001 * 50_000),  # a fixed cost and a linear part: the line
    (lambda n: 1e-6 * n ** 2, 1e-6 * 50_000 ** 2),       # quadratic: the power law
    (lambda n: 5.0, 5.0),                                 # all overhead: no growth
])
def test_the_fit_time_estimate_follows_the_probes(monkeypatch, cost, expected):
    """On a clock that advances by ``cost(rows)`` per fit, the estimate is the cost of the whole table."""
    import time

    import shap_instances.report._models as models

    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])  # the probes are timed by approximators.bounded_probe

    def fit(name, task, X, y, seed=0, *, explainer=None):
        clock[0] += cost(len(X))

    monkeypatch.setattr(models, "fit_model", fit)
    X = pd.DataFrame({"a": np.zeros(50_000)})
    seconds, how = models.estimate_fit_seconds("ridge", "regression", X, np.zeros(50_000))
    assert seconds == pytest.approx(expected, rel=1e-9)
    assert "1,000 and 2,000 random rows" in how


def test_a_fit_beyond_the_time_budget_is_refused_before_it(csv, capsys, monkeypatch):
    import shap_instances.report as report

    monkeypatch.setattr(report, "estimate_fit_seconds", lambda *a, **k: (500.0, "timed"))
    monkeypatch.setattr(report, "fit_model", lambda *a, **k: pytest.fail("the model was fitted"))
    code = main(["explain", "--data", csv(_frame(8_000)), "--target", "y", "--model", "forest",
                 "--time-budget", "60", "--out", "never.csv"])
    assert code == 2
    err = capsys.readouterr().err
    assert "fitting --model forest on 8,000 rows would take about 8 min (timed)" in err
    assert "--model ridge or knn" in err


@pytest.mark.slow  # two whole explain commands in subprocesses: 6-7 s
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_shaps_own_algorithms_get_the_models_prediction_function(csv, tmp_path, task):
    """``--explainer exact`` (shap's algorithm) on the fitted pipeline: shap calls its model, so it is given the
    pipeline's predict (regression) or predict_proba (classification); each row's base value and values add up to
    that pipeline's own prediction (refitted here with the command's seed)."""
    from shap_instances.report import fit_model

    frame = _frame(40)
    if task == "classification":
        frame["y"] = np.where(frame["y"] > frame["y"].median(), "high", "low")
    model_name = "logistic" if task == "classification" else "ridge"
    out = tmp_path / "v.csv"
    assert main(["explain", "--data", csv(frame), "--target", "y", "--explainer", "exact", "--rows", "3",
                 "--model", model_name, "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    X, y = frame.drop(columns="y"), frame["y"]
    model = fit_model(model_name, task, X, y, 0)
    predicted = model.predict_proba(X.iloc[:3]) if task == "classification" else model.predict(X.iloc[:3])[:, None]
    for k in range(predicted.shape[1]):
        columns = table.columns if task == "regression" else [c for c in table.columns if c.endswith(f"|Output {k}")]
        assert np.allclose(table[columns].sum(axis=1), predicted[:, k], atol=1e-8), (k, table.columns.tolist())


@pytest.mark.parametrize("model, task", [("logistic", "classification"), ("ridge", "regression")])
def test_a_model_agnostic_feature_explainer_attributes_to_the_tables_own_columns(csv, tmp_path, model, task):
    """Before: --explainer isotonic got the one-hot encoded matrix (players colour_blue, colour_green, colour_red)."""
    frame = _frame(40).assign(colour=np.resize(["red", "green", "blue"], 40), y=lambda f: (f.y > 0).astype(int))
    out = tmp_path / "values.csv"
    assert main(["explain", "--data", csv(frame), "--target", "y", "--task", task, "--explainer", "isotonic",
                 "--model", model, "--rows", "2", "--out", str(out)]) == 0
    assert list(pd.read_csv(out, index_col=0).columns) == ["base_value", "a", "b", "colour"]


def _word_target_frame(n: int, seed: int = 1) -> pd.DataFrame:
    """Two numbers, a word column and a word target ``dead`` ("alive" or "dead", as nassCDS's), which depends on
    both kinds of column."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "colour": rng.choice(["red", "green", "blue"], n)})
    score = frame["a"] + (frame["colour"] == "red") + rng.normal(scale=0.5, size=n)
    return frame.assign(dead=np.where(score > 0.3, "dead", "alive"))


@pytest.mark.parametrize("words", [True, False], ids=["word-column", "numeric-columns"])
def test_isotonic_explains_the_probability_of_a_word_target(csv, tmp_path, words):
    """Before: --explainer isotonic on a word target (nassCDS's dead) failed, the model's wrapper returning its
    labels ("alive"); on 0/1 labels it explained the labels, silently. Now the probability of the second class, the
    values those of the explainer called from Python on an encoding of the word column of the test's own."""
    from shap_instances import IsotonicShapleyExplainer
    from shap_instances.report import fit_model

    frame = _word_target_frame(80).drop(columns=[] if words else ["colour"])
    out = tmp_path / "v.csv"
    assert main(["explain", "--data", csv(frame), "--target", "dead", "--explainer", "isotonic", "--model",
                 "logistic", "--rows", "3", "--out", str(out)]) == 0
    X = frame.drop(columns="dead")
    model = fit_model("logistic", "classification", X, frame["dead"], 0)
    words_of = np.array(sorted(set(frame.get("colour", []))))  # codes by alphabet (the command's: by appearance)
    coded = X.assign(colour=np.searchsorted(words_of, X["colour"]).astype(float)) if words else X

    def probability_of_dead(Z):
        rows = pd.DataFrame(Z, columns=X.columns)
        if words:
            rows["colour"] = words_of[rows["colour"].round().astype(int)]
        return model.predict_proba(rows)[:, list(model.classes_).index("dead")]

    expected = IsotonicShapleyExplainer(probability_of_dead, coded.to_numpy())(coded.to_numpy()[:3])
    table = pd.read_csv(out, index_col=0)
    np.testing.assert_allclose(table[list(X.columns)].to_numpy(), expected.values, rtol=1e-9, atol=1e-12)
    assert np.abs(expected.values).max() > 0.1  # attributions of a score, not all zero


def test_shaps_algorithms_mask_the_word_columns_of_a_table(csv, tmp_path):
    """Before: --explainer exact on a table with word columns (nassCDS) failed inside shap ("unsupported operand
    type(s) for -: 'str' and 'str'"), masking the raw columns. Now the table's own columns as codes, as for
    isotonic: each class's values add up to the model's probability of that class (exact values are efficient)."""
    from shap_instances.report import fit_model

    frame = _word_target_frame(40)
    out = tmp_path / "v.csv"
    assert main(["explain", "--data", csv(frame), "--target", "dead", "--explainer", "exact", "--model", "logistic",
                 "--rows", "3", "--out", str(out)]) == 0
    table = pd.read_csv(out, index_col=0)
    X = frame.drop(columns="dead")
    probabilities = fit_model("logistic", "classification", X, frame["dead"], 0).predict_proba(X.iloc[:3])
    for k in range(2):
        columns = [c for c in table.columns if c.endswith(f"|Output {k}")]
        assert [c.split("|")[0] for c in columns] == ["base_value", "a", "b", "colour"]
        np.testing.assert_allclose(table[columns].sum(axis=1), probabilities[:, k], atol=1e-8)


@pytest.mark.parametrize("option, value", [("time_budget", 0.5), ("time_budget", 30 * 86400 + 1),
                                           ("max_memory", 2.0**21), ("max_memory", 1e-7), ("max_evals", 0),
                                           ("seed", -1), ("seed", 2**32)])
def test_the_report_and_the_command_line_refuse_the_same_numbers(tmp_path, capsys, option, value):
    """The ranges are declared once (utils.RUN_OPTIONS): run_report and the command line refuse a number outside
    it, both naming that range, before any work."""
    from shap_instances.datasets import load_diabetes
    from shap_instances.exceptions import InvalidParameterError
    from shap_instances.report import run_report
    from shap_instances.utils import RUN_OPTIONS

    number = RUN_OPTIONS[option]  # max_memory: bytes in Python, GiB on the command line
    X, y = load_diabetes()
    with pytest.raises(InvalidParameterError, match=re.escape(f"{option} must be ") + ".*" + re.escape(
            str(number.allowed))):
        run_report(X.iloc[:30], y.iloc[:30], out=tmp_path / "r", silent=True, **{option: value * number.unit})
    assert main(["report", "--out", str(tmp_path / "c"), f"--{option.replace('_', '-')}", str(value)]) == 2
    assert str(number.command_line()) in capsys.readouterr().err
    assert not (tmp_path / "r").exists() and not (tmp_path / "c").exists()


def test_explain_validates_its_training_rows_once(tmp_path, monkeypatch, capsys):
    """Every command validates within utils.validating_once (before: --explainer gap validated the 442 training
    rows twice, for its forest's index and for its proximities)."""
    from shap_instances.utils import _validation

    validated, checked = [], _validation._checked_data
    monkeypatch.setattr(_validation, "_checked_data",
                        lambda X, *args: validated.append(np.shape(X)[0]) or checked(X, *args))
    assert main(["explain", "--explainer", "gap", "--rows", "2", "--out", str(tmp_path / "v.csv")]) == 0
    assert validated.count(442) == 1, validated


def test_a_word_that_data_does_not_hold_is_refused_by_name():
    """Word columns as category codes (explain's model-agnostic feature explainers): a word --data does not hold
    has no code, and is refused naming the column and the word (never coded as another word)."""
    from shap_instances.cli._codes import CategoryCodes
    from shap_instances.exceptions import DataValidationError

    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "colour": ["red", "blue", "red"], "ok": [True, False, True]})
    codes = CategoryCodes(frame)
    coded = codes.transform(frame)
    assert coded.dtypes.eq("float64").all() and coded["colour"].tolist() == [0.0, 1.0, 0.0]
    pd.testing.assert_frame_equal(codes.decode(coded.to_numpy()), frame)
    with pytest.raises(DataValidationError, match=r"column 'colour' holds values that --data does not: \['purple'\]"):
        codes.transform(frame.assign(colour=["red", "purple", "blue"]))
