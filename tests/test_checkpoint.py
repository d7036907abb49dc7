"""Checkpoints that cannot run code and cannot be lost (docs/reliability.md, "Checkpoint format").

The file is an ``.npz`` archive with a JSON header, read with ``allow_pickle=False``; every damaged, foreign or
mismatched file is refused with a CheckpointError naming it; writes are atomic and durable; a lock keeps two
runs off one file; a run killed with SIGKILL resumes to the bitwise result of an uninterrupted one.
"""

import io
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from shap_instances.approximators import PermutationApproximator
from shap_instances.approximators._checkpoint import FORMAT, VERSION, CheckpointFile
from shap_instances.exceptions import CheckpointError, ShapInstancesError
from shap_instances.games import FunctionGame

from .interrupting import Interrupt, interrupting_game

_WEIGHTS = np.random.default_rng(3).normal(size=(6, 2))
SETTINGS = dict(n_permutations=24, batch_size=4, random_state=11, silent=True)
REPOSITORY = Path(__file__).resolve().parents[1]


def _tanh(masks):
    return np.tanh(masks @ _WEIGHTS)


def _game():
    return FunctionGame(_tanh, 6, 2)



def _interrupted_run(path, fail_on_call=3, **settings):
    """A run interrupted in its ``fail_on_call``-th batch, leaving a checkpoint of the batches before."""
    with pytest.raises(Interrupt):
        game = interrupting_game(_tanh, 6, 2, fail_on_call)
        PermutationApproximator(**(SETTINGS | settings), checkpoint=path).estimate(game)


def _header(path):
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(archive["header"].tobytes())


def _refused(path, match, game=None):
    """Run on ``path``; assert a CheckpointError naming the file and matching ``match``; return the game."""
    game = _game() if game is None else game
    with pytest.raises(CheckpointError, match=match) as info:
        PermutationApproximator(**SETTINGS, checkpoint=path).estimate(game)
    assert f"checkpoint '{path}'" in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ShapInstancesError)
    return game


# --- the format -------------------------------------------------------------------------------------------------


def test_the_file_is_an_npz_archive_with_a_versioned_json_header(tmp_path):
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["empty.npy", "full.npy", "header.npy", "m2.npy", "mean.npy"]
    header = _header(path)
    assert (header["format"], header["version"]) == (FORMAT, VERSION) == ("shap_instances.permutation_checkpoint", 1)
    state = header["state"]
    # two batches: the first is one antithetic pair alone (timed, for the long-run warning and the pool
    # decision), the second 4 permutations
    assert state["done"] == 6 and state["units"] == 3
    assert state["fingerprint"] == {"players": 6, "outputs": 2, "permutations": 24, "batch": 4, "antithetic": True,
                                    "seed": 11, "game": None}
    pcg = state["rng"]["state"]  # 128-bit numbers: decimal strings
    assert state["rng"]["bit_generator"] == "PCG64" and isinstance(pcg["state"]["__int__"], str)
    assert int(pcg["state"]["__int__"]) >= 0 and set(pcg["inc"]) == {"__int__"}
    assert header["arrays"]["mean"] == {"dtype": "<f8", "shape": [6, 2]}
    assert oct(path.stat().st_mode & 0o777) == "0o600"  # mkstemp's mode: the owner only


@pytest.mark.parametrize("name", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_every_bit_generator_state_and_big_seeds_round_trip(tmp_path, name):
    rng = np.random.Generator(getattr(np.random, name)(2**100 + 7))
    rng.random(5)
    state = {"rng": rng.bit_generator.state, "done": 4, "units": 2, "evals": 28, "mean": np.full((3, 2), 0.1),
             "m2": np.full((3, 2), 1e-300), "empty": np.zeros(2), "full": np.array([1.0, -np.inf]),
             "fingerprint": {"players": 3, "outputs": 2, "seed": 2**100 + 7, "game": "ab"},
             "counters": {"n_evaluations": 28, "n_failed_fits": np.int64(3), "first_failure": "why"}}
    path = tmp_path / "run.npz"
    with CheckpointFile(path) as checkpoint:
        checkpoint.save(state)
        loaded = checkpoint.load({"players": 3, "outputs": 2, "seed": 2**100 + 7, "game": "ab"})
    restored = np.random.Generator(getattr(np.random, name)())
    restored.bit_generator.state = loaded["rng"]
    np.testing.assert_array_equal(restored.random(4), rng.random(4))
    for key in ("mean", "m2", "empty", "full"):
        assert loaded[key].tobytes() == state[key].tobytes()
    assert loaded["counters"] == {"n_evaluations": 28, "n_failed_fits": 3, "first_failure": "why"}
    assert loaded["fingerprint"]["seed"] == 2**100 + 7


def test_resume_after_an_interruption_is_bitwise_and_leaves_no_lock(tmp_path):
    reference = PermutationApproximator(**SETTINGS).estimate(_game())
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    assert path.exists() and not Path(f"{path}.lock").exists()  # released however the run ended
    resumed = PermutationApproximator(**SETTINGS, checkpoint=path).estimate(_game())
    assert resumed.values.tobytes() == reference.values.tobytes()
    assert resumed.standard_errors.tobytes() == reference.standard_errors.tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]  # no lock, no temporary file left


# --- damaged, foreign and mismatched files ----------------------------------------------------------------------


def _valid_bytes(tmp_path):
    path = tmp_path / "valid.npz"
    _interrupted_run(path)
    return path.read_bytes()


@pytest.mark.parametrize(("content", "match"), [
    (b"", r"is empty \(0 bytes\)"),
    (b"\x00garbage\xff" * 50, r"is not a shap_instances checkpoint \(not an \.npz archive: it begins with"),
    (b"just some text", r"not an \.npz archive"),
])
def test_empty_and_garbage_files_are_refused(tmp_path, content, match):
    path = tmp_path / "run.npz"
    path.write_bytes(content)
    game = _refused(path, match)
    assert game.n_evaluations == 0  # refused before any work
    assert path.read_bytes() == content  # and never overwritten


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_files_are_refused(tmp_path, keep):
    data = _valid_bytes(tmp_path)
    path = tmp_path / "run.npz"
    path.write_bytes(data[: int(len(data) * keep)])
    _refused(path, r"is damaged or truncated")


def test_a_flipped_byte_is_detected_by_the_archive_checksums(tmp_path):
    data = bytearray(_valid_bytes(tmp_path))
    offset = data.index(b"mean.npy") + 200  # inside the stored array 'mean'
    data[offset] ^= 0xFF
    path = tmp_path / "run.npz"
    path.write_bytes(bytes(data))
    _refused(path, r"is damaged or truncated \(BadZipFile: Bad CRC-32")


def test_other_formats_versions_and_archives_are_refused(tmp_path):
    path = tmp_path / "run.npz"
    np.savez(path, values=np.zeros(3))
    _refused(path, r"is an \.npz archive but not a shap_instances checkpoint \(no 'header' member; members: "
                   r"\['values'\]\)")
    np.save(tmp_path / "single.npy", np.zeros(3))
    _refused(tmp_path / "single.npy", r"is a single \.npy array, not a checkpoint")
    data = _valid_bytes(tmp_path)
    for change, match in ((dict(format="somebody.else"), r"is a 'somebody\.else' file, not a "
                                                         r"'shap_instances\.permutation_checkpoint' one"),
                          (dict(version=2), r"has format version 2; this shap_instances reads version 1 only")):
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            members = {name: archive[name] for name in archive.files}
        header = json.loads(members["header"].tobytes()) | change
        members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        np.savez(path, **members)
        _refused(path, match)


def test_a_file_of_another_run_is_refused_naming_what_differs(tmp_path):
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    with pytest.raises(CheckpointError, match=r"belongs to another run \(seed 11 in the file, 12 now\); delete it"):
        PermutationApproximator(**(SETTINGS | dict(random_state=12)), checkpoint=path).estimate(_game())
    with pytest.raises(ValueError, match=r"belongs to another run \(permutations 24 in the file, 32 now\)"):
        PermutationApproximator(**(SETTINGS | dict(n_permutations=32)), checkpoint=path).estimate(_game())
    wider = FunctionGame(lambda masks: np.tanh(masks @ _WEIGHTS[:, :1]), 6, 1)
    with pytest.raises(CheckpointError, match=r"outputs 2 in the file, 1 now"):
        PermutationApproximator(**SETTINGS, checkpoint=path).estimate(wider)


def _rewrite_state(path, **changes):
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    header = json.loads(members["header"].tobytes())
    header["state"].update(changes)
    members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **members)


@pytest.mark.parametrize(("changes", "match"), [
    (dict(done=-4), r"is damaged: 'done' is -4, not a non-negative int"),
    (dict(units="8"), r"is damaged: 'units' is '8'"),
    (dict(counters=[1, 2]), r"is damaged: 'counters' is \[1, 2\]"),
    (dict(rng={"bit_generator": "seed", "state": {}}), r"has an unknown random generator 'seed'"),
    (dict(rng={"bit_generator": "PCG64", "state": {"state": 1}}), r"has an invalid PCG64 generator state"),
    (dict(rng={"bit_generator": "MT19937", "state": {"key": {"__array__": "|O", "shape": [1], "values": ["1"]},
                                                      "pos": 0}}), r"is damaged: malformed integer array"),
])
def test_damaged_fields_are_refused(tmp_path, changes, match):
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    _rewrite_state(path, **changes)
    before = np.random.get_state()[1].copy()  # noqa: NPY002 - a generator named 'seed' must not reseed numpy
    _refused(path, match)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_arrays_that_disagree_with_the_header_are_refused(tmp_path):
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    np.savez(path, **(members | {"mean": np.zeros((5, 2))}))
    _refused(path, r"is damaged: array 'mean' is <f8 \[5, 2\], the header says")
    np.savez(path, **{k: v for k, v in members.items() if k != "m2"})
    _refused(path, r"is damaged: the header lists arrays \['empty', 'full', 'm2', 'mean'\] but the archive holds")


# --- nothing is unpickled ---------------------------------------------------------------------------------------


class _Payload:
    """Unpickling this creates the directory ``marker``: proof that code ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.makedirs, (self.marker,)


def test_a_crafted_pickle_is_refused_without_being_unpickled(tmp_path):
    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Payload(marker))
    pickle.loads(payload)  # the payload is live: unpickling it runs os.makedirs ...
    assert marker.is_dir()
    marker.rmdir()
    path = tmp_path / "run.pkl"
    path.write_bytes(payload)
    game = _refused(path, r"is a pickle \(the checkpoint format of shap_instances 0\.1\); it is not read, since "
                          r"loading a pickle can run arbitrary code")
    assert not marker.exists() and game.n_evaluations == 0  # ... but loading the checkpoint did not
    assert path.read_bytes() == payload  # and the file was not treated as 'no checkpoint' and overwritten


def test_an_old_pickled_checkpoint_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "run.pkl"
    path.write_bytes(pickle.dumps({"done": 8, "mean": np.zeros((6, 2))}))
    _refused(path, r"is a pickle .* A run cannot resume from it: delete it to start afresh")
    path.write_bytes(pickle.dumps([1, 2, 3]))  # used to give "'list' object has no attribute 'get'"
    _refused(path, r"is a pickle")


def test_a_pickle_inside_the_archive_is_refused_without_being_unpickled(tmp_path):
    marker = tmp_path / "code-ran"
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(marker)
    np.savez(path, **(members | {"mean": evil}))  # numpy pickles object arrays into the member
    _refused(path, r"contains a pickled \(object\) array; it is not read, since unpickling can run arbitrary code")
    assert not marker.exists()


# --- the directory and the lock ---------------------------------------------------------------------------------


def test_a_missing_directory_is_refused_before_any_work(tmp_path):
    path = tmp_path / "no" / "such" / "dir" / "run.npz"
    game = _refused(path, r"cannot be written: its directory '.*dir' does not exist; create it first")
    assert game.n_evaluations == 0


def test_a_directory_as_the_path_is_refused(tmp_path):
    _refused(tmp_path, r"is a directory; pass a file path such as")


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root (or Windows) writes to any directory")
def test_a_read_only_directory_is_refused_before_any_work(tmp_path):
    directory = tmp_path / "ro"
    directory.mkdir()
    directory.chmod(0o500)
    try:
        game = _refused(directory / "run.npz", r"its directory .* is not writable")
        assert game.n_evaluations == 0
    finally:
        directory.chmod(0o700)


def test_an_unwritable_directory_is_refused_before_any_work_as_root_too(tmp_path, monkeypatch):
    """What the permission checks see is simulated, so this runs as root as well."""
    path = tmp_path / "run.npz"
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    game = _refused(path, r"cannot be written: its directory '.*' is not writable")
    assert game.n_evaluations == 0
    monkeypatch.undo()
    real_open = os.open

    def refusing_open(name, flags, *args):
        if str(name).endswith(".lock"):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", refusing_open)
    game = _refused(path, r"cannot be locked: its lock file '.*run\.npz\.lock' cannot be created "
                          r"\(\[Errno 13\] Permission denied")
    assert game.n_evaluations == 0 and not path.exists()


def _write_lock(path, **content):
    lock = Path(f"{path}.lock")
    lock.write_text(json.dumps({"host": socket.gethostname(), "created": "2024-01-01 00:00:00"} | content))
    return lock


def test_a_second_run_on_the_same_file_is_refused_while_the_first_is_alive(tmp_path):
    path = tmp_path / "run.npz"
    with CheckpointFile(path):  # this process holds the lock, as a run in another thread would
        game = _refused(path, r"is in use by another run \(this process, since .*\); wait for it to finish or use "
                              r"another file\. If no such run exists, delete '.*run\.npz\.lock'")
        assert game.n_evaluations == 0
    parent = os.getppid()  # a live process other than this one
    _write_lock(path, pid=parent, token="x")
    _refused(path, rf"is in use by another run \(process {parent}, since 2024-01-01 00:00:00\)")
    _write_lock(path, pid=parent, host="elsewhere.example", token="x")
    _refused(path, r"is in use by a run on host 'elsewhere\.example' \(process \d+, since .*\), whose state cannot be "
                   r"checked from here")


def test_the_lock_of_a_dead_process_is_taken_over(tmp_path):
    path = tmp_path / "run.npz"
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    lock = _write_lock(path, pid=finished.pid, token="dead")
    (tmp_path / ".run.npz.partial-abc123.tmp").write_bytes(b"half a write")  # left by the killed run
    (tmp_path / "unrelated.tmp").write_bytes(b"not ours")
    reference = PermutationApproximator(**SETTINGS).estimate(_game())
    result = PermutationApproximator(**SETTINGS, checkpoint=path).estimate(_game())
    assert result.values.tobytes() == reference.values.tobytes()
    assert not lock.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run.npz", "unrelated.tmp"]


def test_an_unreadable_lock_is_refused_while_fresh_and_taken_over_when_old(tmp_path):
    path = tmp_path / "run.npz"
    lock = Path(f"{path}.lock")
    lock.write_bytes(b"")  # a run that died between creating its lock and writing it, or one doing so now
    _refused(path, r"is being opened by another run \(its lock file '.*' is being written\)")
    old = time.time() - 60
    os.utime(lock, (old, old))
    PermutationApproximator(**SETTINGS, checkpoint=path).estimate(_game())
    assert not lock.exists()


def test_a_fresh_lock_is_not_removed_by_a_run_that_saw_a_stale_one(tmp_path):
    """Two runs find the same stale lock; the first takes over; the second must not remove the first's lock."""
    path = tmp_path / "run.npz"
    checkpoint = CheckpointFile(path)
    stale = {"pid": 999_999_999, "host": socket.gethostname(), "token": "stale"}
    fresh = _write_lock(path, pid=os.getpid(), token="fresh")
    checkpoint._break_stale_lock(stale)  # what the second run does with the content it read before
    assert json.loads(fresh.read_text())["token"] == "fresh"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz.lock"]


def test_a_run_whose_lock_was_taken_stops_writing(tmp_path):
    path = tmp_path / "run.npz"

    class Thief(FunctionGame):
        calls = 0

        def prefix_values(self, permutations):
            Thief.calls += 1
            if Thief.calls == 2:
                _write_lock(path, pid=os.getpid(), token="someone else")
            return super().prefix_values(permutations)

    game = Thief(lambda masks: np.tanh(masks @ _WEIGHTS), 6, 2)
    with pytest.raises(CheckpointError, match=r"lost its lock file .* not writing, so the other run's state is kept"):
        PermutationApproximator(**SETTINGS, checkpoint=path).estimate(game)
    assert _header(path)["state"]["done"] == 2  # the first batch (one timed pair); the second was not written
    assert json.loads(Path(f"{path}.lock").read_text())["token"] == "someone else"  # and not released by us


# --- atomic, durable writes -------------------------------------------------------------------------------------


def test_a_failed_write_keeps_the_previous_checkpoint_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    before = path.read_bytes()
    real_savez = np.savez

    def failing_savez(handle, **arrays):
        real_savez(io.BytesIO(), **arrays)
        handle.write(b"PK\x03\x04 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", failing_savez)
    with pytest.raises(OSError, match="No space left"):
        PermutationApproximator(**SETTINGS, checkpoint=path).estimate(_game())
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.npz"]


def test_every_write_syncs_the_file_and_its_directory(tmp_path, monkeypatch):
    path = tmp_path / "run.npz"
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real_fsync(fd)

    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to name the synced descriptors")
    monkeypatch.setattr(os, "fsync", recording_fsync)
    PermutationApproximator(**SETTINGS, checkpoint=path).estimate(_game())
    saves = 1 + -(-(24 - 2) // 4)  # a first batch of one timed pair, then batches of 4 permutations
    assert synced[0] == "run.npz.lock"  # the lock, once
    writes = synced[1:]
    assert len(writes) == 2 * saves
    assert all(name.startswith(".run.npz.partial-") and name.endswith(".tmp") for name in writes[::2])
    assert writes[1::2] == [tmp_path.name] * saves  # the directory, after each rename


# --- a real SIGKILL ---------------------------------------------------------------------------------------------

_KILLED_RUN = textwrap.dedent("""
    import sys
    import numpy as np
    from sklearn.datasets import load_diabetes
    from sklearn.tree import DecisionTreeRegressor
    from shap_instances import InstanceKernelExplainer

    X, y = load_diabetes(return_X_y=True)
    explainer = InstanceKernelExplainer(DecisionTreeRegressor(max_depth=4, random_state=0), X[:40], y=y[:40],
                                        approximator="permutation", n_permutations=96, batch_size=4, random_state=5,
                                        silent=True, checkpoint=sys.argv[1])
    np.save(sys.argv[2], explainer().values)
""")


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_is_bitwise_identical(tmp_path):
    """A subprocess runs a checkpointed residual explanation with tree refits (no fast path: 41 refits per
    permutation); it is killed with SIGKILL as soon as its first checkpoint exists, in the middle of the run,
    and the run resumed here returns exactly the values of an uninterrupted run."""
    from sklearn.datasets import load_diabetes
    from sklearn.tree import DecisionTreeRegressor

    from shap_instances import InstanceKernelExplainer

    path, out = tmp_path / "run.npz", tmp_path / "values.npy"
    script = tmp_path / "run.py"
    script.write_text(_KILLED_RUN)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(REPOSITORY), os.environ.get("PYTHONPATH", "")]),
                        "OPENBLAS_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, str(script), str(path), str(out)], env=env)
    deadline = time.monotonic() + 300
    while not path.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    done = _header(path)["state"]["done"]
    assert 0 < done < 96 and not out.exists()  # killed mid-run, after a checkpoint
    assert json.loads(Path(f"{path}.lock").read_text())["pid"] == child.pid  # its lock is left behind

    X, y = load_diabetes(return_X_y=True)
    settings = dict(approximator="permutation", n_permutations=96, batch_size=4, random_state=5, silent=True)
    model = DecisionTreeRegressor(max_depth=4, random_state=0)
    resumed = InstanceKernelExplainer(model, X[:40], y=y[:40], checkpoint=path, **settings)().values
    reference = InstanceKernelExplainer(model, X[:40], y=y[:40], **settings)().values
    assert resumed.tobytes() == reference.tobytes()
    assert not Path(f"{path}.lock").exists() and not list(tmp_path.glob(".run.npz.partial-*"))


# --- states that contradict themselves (issue 26) ----------------------------------------------------------------


@pytest.mark.parametrize(("changes", "match"), [
    (dict(done=24), r"is damaged: its counters disagree \('done' 24 permutations in 'units' 3 "),
    (dict(done=400, units=400), r"its counters disagree \('done' 400 .* of 24 permutations in all\)"),
])
def test_a_checkpoint_whose_counters_disagree_is_refused(tmp_path, changes, match):
    """Before: 'done' raised to the run's total was resumed as finished, returning the partial mean."""
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    _rewrite_state(path, **changes)
    _refused(path, match)


def test_an_edited_mean_is_refused_as_a_damaged_file_not_a_bug(tmp_path):
    """Before: EfficiencyError, 'This is a bug in shap_instances; please report it'."""
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    members["mean"] = members["mean"] + 0.5
    np.savez(path, **members)
    _refused(path, r"is damaged: its mean contributions sum to .* not v\(all\) - v\(empty\)")


def test_a_damaged_zip_directory_is_refused_naming_the_file(tmp_path):
    """Before: NotImplementedError 'That compression method is not supported' (the directory's method field)."""
    path = tmp_path / "run.npz"
    _interrupted_run(path)
    data = bytearray(path.read_bytes())
    entry = data.index(b"PK\x01\x02")  # the first central-directory entry; its compression method at +10
    data[entry + 10:entry + 12] = (99).to_bytes(2, "little")
    path.write_bytes(bytes(data))
    _refused(path, r"is damaged or truncated \(NotImplementedError")


def test_an_integer_array_out_of_its_dtype_range_is_refused():
    from shap_instances.approximators._checkpoint import _decode, _encode

    encoded = _encode({"state": np.array([1, 2], dtype=np.int8)})
    assert np.array_equal(_decode(encoded)["state"], [1, 2])
    encoded["state"]["values"][1] = "300"  # beyond int8
    with pytest.raises(ValueError, match="out of the range of int8"):
        _decode(encoded)


def test_a_truncated_run_may_save_a_mean_off_efficiency_by_its_tolerance_only():
    from shap_instances.approximators.permutation import _efficiency_disagreement

    empty, full = np.zeros(1), np.array([10.0])
    mean = np.array([[4.0], [5.5]])  # sums to 9.5: 5% of v(all) - v(empty) short
    assert _efficiency_disagreement(mean, empty, full, 0.1) is None
    assert "sum to [9.5], not v(all) - v(empty) = [10.0]" in _efficiency_disagreement(mean, empty, full, 0.01)
    assert _efficiency_disagreement(mean, empty, full, None) is not None
