"""The GPU watch: the contention decision on recorded NVML samples, the sampler thread, and NVML absent or faked."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from specbench.contention import devices, nvml, samples
from specbench.contention.contended import judge
from specbench.contention.nvml import NvmlSampler, device_info
from specbench.contention.samples import Sample, Verdict, read_samples
from specbench.contention.watch import GpuWatch
from support.paths import TEST_DATA

DATA = TEST_DATA / "nvml"
H200_SERVER, A100_SERVER = 48213, 5120


def _judge_file(name: str, allowed: set[int], *, nvml: bool = True, max_load: float | None = None) -> Verdict:
    return judge(read_samples(DATA / name), allowed, nvml_available=nvml, max_load_per_cpu=max_load)


# --- judge on recordings -----------------------------------------------------------------------------------------


def test_clean_run_is_not_contended() -> None:
    verdict = _judge_file("h200_clean.jsonl", {H200_SERVER})
    assert verdict == Verdict(False, verdict.reason, [], 7, 0, "ok")
    assert verdict.reason.startswith("clean")


def test_foreign_pid_mid_run_is_contended() -> None:
    verdict = _judge_file("a100_foreign_mid.jsonl", {A100_SERVER})
    assert verdict.contended
    assert verdict.foreign_pids == [7781]
    assert verdict.nvml == "ok"
    assert "pid 7781 in 4 sample(s) (during)" in verdict.reason


def test_foreign_pid_only_before_start_is_contended() -> None:
    verdict = _judge_file("h200_foreign_before.jsonl", {H200_SERVER})
    assert verdict.contended
    assert verdict.foreign_pids == [90210]
    assert "(before)" in verdict.reason


def test_allowed_pids_cover_children() -> None:
    assert not _judge_file("a100_foreign_mid.jsonl", {A100_SERVER, 7781}).contended


def test_without_allowed_pids_the_server_itself_is_foreign() -> None:
    assert _judge_file("h200_clean.jsonl", set()).foreign_pids == [H200_SERVER]


def test_some_failed_samples_do_not_make_a_cell_contended_but_are_counted() -> None:
    verdict = _judge_file("h200_some_failed.jsonl", {H200_SERVER})
    assert (verdict.contended, verdict.nvml, verdict.samples, verdict.failed_samples) == (False, "ok", 6, 2)
    assert "2 of 6 sample(s) failed" in verdict.reason


def test_all_failed_samples_make_the_watch_blind() -> None:
    verdict = _judge_file("h200_all_failed.jsonl", {H200_SERVER})
    assert (verdict.contended, verdict.nvml, verdict.samples, verdict.failed_samples) == (False, "blind", 5, 5)
    assert verdict.reason.startswith("blind")


def test_no_samples_is_blind() -> None:
    verdict = judge([], {1}, nvml_available=True)
    assert (verdict.contended, verdict.nvml, verdict.samples) == (False, "blind", 0)


def test_nvml_unavailable_is_accepted_and_noted() -> None:
    verdict = _judge_file("cpu_only_unavailable.jsonl", {H200_SERVER}, nvml=False)
    assert (verdict.contended, verdict.nvml, verdict.failed_samples) == (False, "unavailable", 0)
    assert "NVML unavailable" in verdict.reason


@pytest.mark.parametrize(
    ("name", "max_load", "contended"),
    [
        ("cpu_only_loaded.jsonl", None, False),  # load is not judged unless asked
        ("cpu_only_loaded.jsonl", 1.5, True),  # 41.2 / 16 = 2.58 per CPU
        ("cpu_only_unavailable.jsonl", 1.5, False),  # the server's own threads: 7.4 / 16 = 0.46
        ("cpu_only_unavailable.jsonl", 0.4, True),
    ],
)
def test_cpu_load_judged_only_with_a_threshold(name: str, max_load: float | None, contended: bool) -> None:
    verdict = _judge_file(name, {H200_SERVER}, nvml=False, max_load=max_load)
    assert verdict.contended is contended
    assert verdict.nvml == "unavailable"
    assert verdict.foreign_pids == []
    if contended:
        assert "CPU load" in verdict.reason and "over 16 CPUs" in verdict.reason


def test_cpu_and_gpu_reasons_are_both_given() -> None:
    verdict = _judge_file("a100_foreign_mid.jsonl", {A100_SERVER}, max_load=0.01)
    assert "pid 7781" in verdict.reason and "CPU load" in verdict.reason


def test_load_threshold_without_load_recorded_is_noted() -> None:
    samples = [Sample(1.0, "before", True), Sample(3.0, "during", True)]
    verdict = judge(samples, {1}, nvml_available=False, max_load_per_cpu=1.0)
    assert not verdict.contended
    assert "CPU load not recorded" in verdict.reason


def test_judge_is_pure() -> None:
    samples = read_samples(DATA / "a100_foreign_mid.jsonl")
    before = [s.to_json() for s in samples]
    allowed = {A100_SERVER}
    assert judge(samples, allowed, nvml_available=True) == judge(samples, allowed, nvml_available=True)
    assert [s.to_json() for s in samples] == before
    assert allowed == {A100_SERVER}


def test_verdict_to_json() -> None:
    verdict = _judge_file("a100_foreign_mid.jsonl", {A100_SERVER})
    data = json.loads(json.dumps(verdict.to_json()))
    assert data == {
        "contended": True,
        "reason": verdict.reason,
        "foreign_pids": [7781],
        "samples": 8,
        "failed_samples": 0,
        "nvml": "ok",
        "foreign_cpu": None,
        "gpu_watch": "nvml",
        "backend": "cuda",
    }


def _cpu_sample(t: float, busy: float, own: float, mark: str | None = None) -> Sample:
    return Sample(t, "during", True, None, [], 0.5, 2, mark, busy, own, [])


QUIET_CPU = [_cpu_sample(0.0, 10.0, 9.0, "request-start"), _cpu_sample(4.0, 17.9, 17.0, "request-end")]
BUSY_CPU = [_cpu_sample(0.0, 10.0, 9.0, "request-start"), _cpu_sample(4.0, 18.0, 13.0, "request-end")]


@pytest.mark.parametrize("backend", ["vulkan", "metal", "hip"])
def test_a_backend_without_gpu_accounting_is_recorded_as_not_watched_and_cpu_still_judged(backend: str) -> None:
    verdict = judge(QUIET_CPU, {1}, nvml_available=False, max_foreign_cpu=0.25, backend=backend)
    assert (verdict.contended, verdict.gpu_watch, verdict.backend) == (False, "unwatched", backend)
    assert verdict.reason == (
        f"accepted: GPU not watched on this backend ({backend}: no per-process GPU accounting); CPU contention judged"
    )
    busy = judge(BUSY_CPU, {1}, nvml_available=False, max_foreign_cpu=0.25, backend=backend)
    assert busy.contended and "other processes used 0.50 of the CPU time" in busy.reason
    assert busy.gpu_watch == "unwatched"


def test_a_cpu_build_uses_no_gpu_and_a_cuda_build_without_nvml_is_not_watched() -> None:
    cpu = judge(QUIET_CPU, {1}, nvml_available=False, backend="cpu")
    assert cpu.gpu_watch == "cpu"
    assert cpu.reason == "accepted: CPU backend, no GPU used; CPU contention recorded, not judged"
    cuda = judge(QUIET_CPU, {1}, nvml_available=False, backend="cuda")
    assert cuda.gpu_watch == "unwatched" and "NVML unavailable" in cuda.reason
    watched = _judge_file("h200_clean.jsonl", {H200_SERVER})
    assert watched.gpu_watch == "nvml"


# --- Sample round trip -------------------------------------------------------------------------------------------


def test_sample_json_round_trip() -> None:
    for sample in read_samples(DATA / "h200_some_failed.jsonl"):
        assert Sample.from_json(json.loads(json.dumps(sample.to_json()))) == sample


def test_sample_from_json_tolerates_missing_optional_fields() -> None:
    sample = Sample.from_json({"t": 1, "phase": "during", "ok": False})
    assert sample == Sample(1.0, "during", False, None, [], None, None)


def test_recordings_have_the_documented_device_fields() -> None:
    fields = {
        "index",
        "uuid",
        "name",
        "utilization_gpu",
        "utilization_mem",
        "memory_used_mb",
        "memory_total_mb",
        "sm_clock_mhz",
        "mem_clock_mhz",
        "temperature_c",
        "power_w",
        "processes",
    }
    for path in DATA.glob("*.jsonl"):
        for sample in read_samples(path):
            assert sample.phase in samples.PHASES
            assert all(set(device) == fields for device in sample.devices), path.name


# --- GpuWatch with an injected sampler ---------------------------------------------------------------------------


class _Recorded:
    """A sampler that replays fixed device lists, counting calls."""

    def __init__(self, nvml_available: bool = True) -> None:
        self.calls: list[str] = []
        self.nvml_available = nvml_available

    def __call__(self, phase: str) -> Sample:
        self.calls.append(phase)
        procs = [{"pid": 4242, "used_memory_mb": 100.0}] if len(self.calls) == 3 else []
        return Sample(time.time(), phase, True, None, [{"index": 0, "processes": procs}], 0.5, 8)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_watch_samples_at_the_interval_and_writes_one_line_each(tmp_path: Path) -> None:
    out = tmp_path / "cell" / "gpu_samples.jsonl"
    watch = GpuWatch(out, interval_s=0.05, sampler=_Recorded())
    watch.sample_now("before")
    with watch:
        time.sleep(0.3)
    samples = watch.samples
    assert samples[0].phase == "before"
    assert sum(s.phase == "during" for s in samples) >= 3  # >= 2 from the thread, plus the final one
    assert [Sample.from_json(d) for d in _lines(out)] == samples
    assert read_samples(out) == samples
    assert all(b.t >= a.t for a, b in itertools.pairwise(samples))
    verdict = watch.verdict({1})
    assert verdict.contended and verdict.foreign_pids == [4242] and verdict.nvml == "ok"


def test_watch_takes_the_final_sample_even_when_the_block_raises(tmp_path: Path) -> None:
    out = tmp_path / "samples.jsonl"
    sampler = _Recorded()
    watch = GpuWatch(out, interval_s=60.0, sampler=sampler)
    with pytest.raises(RuntimeError, match="server died"), watch:
        raise RuntimeError("server died")
    assert sampler.calls == ["during", "during"]  # the thread's first sample, then the final one at exit
    assert len(_lines(out)) == 2


def test_watch_exits_promptly_with_a_long_interval(tmp_path: Path) -> None:
    start = time.monotonic()
    with GpuWatch(tmp_path / "s.jsonl", interval_s=60.0, sampler=_Recorded()):
        pass
    assert time.monotonic() - start < 10.0


def test_a_raising_sampler_gives_failed_samples_not_a_dead_thread(tmp_path: Path) -> None:
    def broken(phase: str) -> Sample:
        raise OSError("boom")

    watch = GpuWatch(tmp_path / "s.jsonl", interval_s=0.05, sampler=broken)
    with watch:
        time.sleep(0.3)
    samples = watch.samples
    assert len(samples) >= 3
    assert all(not s.ok and s.error == "sampler raised OSError: boom" for s in samples)
    assert watch.verdict({1}).nvml == "blind"


def test_watch_starts_its_file_afresh_and_rejects_bad_arguments(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    out.write_text('{"stale": true}\n')
    watch = GpuWatch(out, sampler=_Recorded())
    assert out.read_text() == ""
    with pytest.raises(ValueError, match="phase"):
        watch.sample_now("after")
    with pytest.raises(ValueError, match="interval_s"):
        GpuWatch(out, interval_s=0)


def test_injected_sampler_reports_nvml_availability(tmp_path: Path) -> None:
    assert not GpuWatch(tmp_path / "a.jsonl", sampler=_Recorded(nvml_available=False)).nvml_available
    assert GpuWatch(tmp_path / "b.jsonl", sampler=lambda phase: Sample(0.0, phase, True)).nvml_available


# --- the NVML sampler against a fake pynvml ----------------------------------------------------------------------


class _NVMLError(Exception):
    pass


class NVMLError_NotSupported(_NVMLError):  # pynvml's own spelling
    pass


class NVMLError_Unknown(_NVMLError):
    pass


class NVMLError_DriverNotLoaded(_NVMLError):
    pass


class NVMLError_LibRmVersionMismatch(_NVMLError):
    pass


def _fake_pynvml(*, init_error: Exception | None = None, processes_error: bool = False) -> SimpleNamespace:
    """Just enough of pynvml for one H200 running pid 48213; power is unsupported."""
    calls: list[str] = []

    def unsupported(*args: object) -> None:
        raise NVMLError_NotSupported("Not Supported")

    def init() -> None:
        calls.append("init")
        if init_error is not None:
            raise init_error

    def processes(handle: object) -> list[SimpleNamespace]:
        if processes_error:
            raise NVMLError_Unknown("Unknown Error")
        return [SimpleNamespace(pid=H200_SERVER, usedGpuMemory=10355736576), SimpleNamespace(pid=7, usedGpuMemory=None)]

    return SimpleNamespace(
        calls=calls,
        NVMLError=_NVMLError,
        NVML_CLOCK_SM=1,
        NVML_CLOCK_MEM=2,
        NVML_TEMPERATURE_GPU=0,
        nvmlInit=init,
        nvmlShutdown=lambda: calls.append("shutdown"),
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: f"handle{i}",
        nvmlDeviceGetUUID=lambda h: b"GPU-7c1f3a52-9e0b-4d6e-8a43-2f5d19c0b7e1",
        nvmlDeviceGetName=lambda h: "NVIDIA H200",
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=93, memory=71),
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(used=10908965274, total=150754820096),
        nvmlDeviceGetClockInfo=lambda h, kind: {1: 1980, 2: 3201}[kind],
        nvmlDeviceGetTemperature=lambda h, kind: 41,
        nvmlDeviceGetPowerUsage=unsupported,
        nvmlDeviceGetComputeRunningProcesses=processes,
        nvmlSystemGetDriverVersion=lambda: "570.124.06",
        nvmlSystemGetCudaDriverVersion=lambda: 12080,
        nvmlDeviceGetMemoryBusWidth=lambda h: 5120,
        nvmlDeviceGetMaxClockInfo=lambda h, kind: 3201,
        nvmlDeviceGetCudaComputeCapability=lambda h: (9, 0),
    )


def test_nvml_sampler_reads_fields_and_guards_unsupported_ones(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = _fake_pynvml()
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: fake)
    watch = GpuWatch(tmp_path / "s.jsonl", interval_s=60.0)
    first = watch.sample_now("before")
    with watch:
        pass
    assert watch.nvml_available
    assert fake.calls == ["init", "shutdown"]
    assert first.ok and first.error is None and first.cpu_count
    assert first.devices == [
        {
            "index": 0,
            "uuid": "GPU-7c1f3a52-9e0b-4d6e-8a43-2f5d19c0b7e1",
            "name": "NVIDIA H200",
            "utilization_gpu": 93,
            "utilization_mem": 71,
            "memory_used_mb": 10403.6,
            "memory_total_mb": 143771.0,
            "sm_clock_mhz": 1980,
            "mem_clock_mhz": 3201,
            "temperature_c": 41,
            "power_w": None,
            "processes": [{"pid": H200_SERVER, "used_memory_mb": 9876.0}, {"pid": 7, "used_memory_mb": None}],
        }
    ]
    assert watch.verdict({H200_SERVER}).foreign_pids == [7]


def test_nvml_sampler_power_in_watts(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_pynvml()
    fake.nvmlDeviceGetPowerUsage = lambda h: 412337
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: fake)
    assert NvmlSampler()("during").devices[0]["power_w"] == pytest.approx(412.337)


def test_nvml_sampler_failed_process_list_is_a_failed_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: _fake_pynvml(processes_error=True))
    sample = NvmlSampler([0])("during")
    assert not sample.ok
    assert sample.error == "device 0 processes: NVMLError_Unknown: Unknown Error"
    assert sample.devices[0]["processes"] is None and sample.devices[0]["utilization_gpu"] == 93


def test_nvml_sampler_no_driver_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_pynvml(init_error=NVMLError_DriverNotLoaded("Driver Not Loaded"))
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: fake)
    sampler = NvmlSampler()
    samples = [sampler("before"), sampler("during")]
    assert not sampler.nvml_available
    assert fake.calls == ["init"]  # not retried
    assert all(s.ok and s.devices == [] and s.error is None for s in samples)
    assert sampler.unavailable_reason == "NVMLError_DriverNotLoaded: Driver Not Loaded"


def test_nvml_sampler_other_init_errors_are_failed_samples_and_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_pynvml(init_error=NVMLError_LibRmVersionMismatch("RM has detected an NVML/RM version mismatch."))
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: fake)
    sampler = NvmlSampler()
    samples = [sampler("before"), sampler("during")]
    assert sampler.nvml_available
    assert fake.calls == ["init", "init", "init"]
    assert all(not s.ok and s.error.startswith("nvmlInit: NVMLError_LibRmVersionMismatch") for s in samples)
    assert judge(samples, {1}, nvml_available=sampler.nvml_available).nvml == "blind"


def test_device_info_with_fake_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_pynvml()
    monkeypatch.setattr(nvml, "_load_pynvml", lambda: fake)
    assert device_info() == {
        "nvml": "ok",
        "error": None,
        "driver": "570.124.06",
        "cuda_driver_version": "12.8",
        "devices": [
            {
                "index": 0,
                "uuid": "GPU-7c1f3a52-9e0b-4d6e-8a43-2f5d19c0b7e1",
                "name": "NVIDIA H200",
                "memory_total_mb": 143771.0,
                "memory_bus_width_bits": 5120,
                "max_mem_clock_mhz": 3201,
                "compute_capability": "9.0",
            }
        ],
    }
    assert fake.calls == ["init", "shutdown"]


def test_device_info_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(nvml, "_load_pynvml", missing)
    info = device_info()
    assert info["nvml"] == "unavailable" and "ImportError" in info["error"] and info["devices"] == []


# --- the real pynvml on this machine ------------------------------------------------------------------------------


def _nvml_initialises() -> bool:
    nv = nvml._load_pynvml()
    try:
        nv.nvmlInit()
    except nv.NVMLError:
        return False
    nv.nvmlShutdown()
    return True


def test_real_nvml_without_a_driver(tmp_path: Path) -> None:
    if _nvml_initialises():
        pytest.skip("NVML initialises here: this machine has an NVIDIA driver")
    info = device_info()
    assert info["nvml"] == "unavailable" and info["error"] and info["devices"] == []
    watch = GpuWatch(tmp_path / "s.jsonl", interval_s=0.05)
    watch.sample_now("before")
    with watch:
        time.sleep(0.12)
    assert not watch.nvml_available
    samples = watch.samples
    assert len(samples) >= 3 and all(s.ok and s.devices == [] for s in samples)
    assert all(s.cpu_count and s.loadavg_1m is not None for s in samples)
    verdict = watch.verdict({12345})
    assert (verdict.contended, verdict.nvml, verdict.failed_samples) == (False, "unavailable", 0)
    assert len(_lines(tmp_path / "s.jsonl")) == len(samples)


# --- which devices are the cell's: CUDA_VISIBLE_DEVICES matched to NVML, checked against the build ---------------

NODE = json.loads((DATA / "device_info_h200x4.json").read_text())
CONFINED = json.loads((DATA / "device_info_h200_confined.json").read_text())
MIXED = json.loads((DATA / "device_info_a100_l4.json").read_text())
DEVICE_2 = "GPU-5d0a2e6c-3b5f-4a7c-9e8d-0f1a2b3c4d62"


@pytest.mark.parametrize(
    ("value", "entries"),
    [(None, None), ("", []), ("2", ["2"]), ("0, 3", ["0", "3"]), ("GPU-5d0a,,1", ["GPU-5d0a"])],
)
def test_parse_visible_devices(value: str | None, entries: list[str] | None) -> None:
    assert devices.parse_visible_devices(value) == entries


@pytest.mark.parametrize(
    ("visible", "uuids"),
    [
        (None, [d["uuid"] for d in NODE["devices"]]),  # unset: CUDA uses every device
        ("2", [DEVICE_2]),  # SLURM without device confinement: the node-wide index
        (DEVICE_2, [DEVICE_2]),  # a full UUID
        ("GPU-5d0a", [DEVICE_2]),  # a unique UUID prefix, as CUDA allows
        ("3,0", [NODE["devices"][3]["uuid"], NODE["devices"][0]["uuid"]]),  # CUDA's order, not NVML's
        ("", []),
    ],
)
def test_select_devices_by_index_or_uuid(visible: str | None, uuids: list[str]) -> None:
    chosen = devices.select_devices(devices.parse_visible_devices(visible), NODE["devices"])
    assert [d["uuid"] for d in chosen] == uuids


def test_select_devices_in_a_confined_job() -> None:
    """SLURM with ConstrainDevices: the job's GPU is 0 to both CUDA and NVML, and its UUID is the node's device 2."""
    chosen = devices.select_devices(["0"], CONFINED["devices"])
    assert [d["uuid"] for d in chosen] == [DEVICE_2]


@pytest.mark.parametrize(
    ("visible", "message"),
    [
        ("4", "'4' matches no NVML device"),
        ("GPU-ffff", "matches no NVML device"),
        ("GPU-", "matches more than one"),
        ("NoDevFiles", "neither an index nor a GPU UUID"),
        (f"2,{DEVICE_2}", "twice"),
    ],
)
def test_select_devices_refuses_to_guess(visible: str, message: str) -> None:
    with pytest.raises(devices.DeviceError, match=message):
        devices.select_devices(devices.parse_visible_devices(visible), NODE["devices"])


def test_only_the_cells_device_is_judged_on_a_shared_node() -> None:
    samples = read_samples(DATA / "h200x4_shared_node.jsonl")
    everything = judge(samples, {H200_SERVER}, nvml_available=True)
    assert everything.contended and everything.foreign_pids == [77001]  # another job's server, on device 0
    ours = devices.select_devices(["2"], NODE["devices"])
    verdict = judge(samples, {H200_SERVER}, nvml_available=True, watched={d["uuid"] for d in ours})
    assert not verdict.contended and verdict.reason.startswith("clean")
    # Watching the wrong device (device 0, as a watch pinned to index 0 would) rejects a clean cell.
    assert judge(samples, {H200_SERVER}, nvml_available=True, watched={NODE["devices"][0]["uuid"]}).contended


@pytest.mark.parametrize(
    ("architectures", "capability", "covered"),
    [
        (["90-real"], "9.0", True),
        (["90-real"], "8.0", False),  # an H200 build on an A100
        (["80-real"], "8.9", True),  # sm_80 machine code runs on later 8.x
        (["86-real"], "8.0", False),  # but not on earlier ones
        (["80-real"], "9.0", False),  # nor across a major version
        (["80"], "9.0", True),  # real + virtual: the PTX is compiled by the driver
        (["75-virtual"], "8.9", True),
        (["90a-real"], "9.0", True),
        (["90a"], "10.0", False),  # arch-specific code runs on exactly its capability, and has no portable PTX
        (["80-real", "90-real"], "9.0", True),
        (["61-virtual", "70-virtual", "75-virtual", "80-virtual", "86-real", "89-real"], "8.9", True),
    ],
)
def test_arch_covers(architectures: list[str], capability: str, covered: bool) -> None:
    assert devices.arch_covers(architectures, capability) is covered


def test_a_build_for_one_gpu_is_refused_on_another() -> None:
    h200_build = ["90-real"]
    devices.check_build_covers(h200_build, NODE["devices"])
    with pytest.raises(devices.DeviceError, match=r"compute capability 8\.0") as error:
        devices.check_build_covers(h200_build, MIXED["devices"][:1])
    assert "NVIDIA A100-SXM4-80GB" in str(error.value) and "GPU-a1000000" in str(error.value)
    devices.check_build_covers(["80-real", "89-real", "90-real"], MIXED["devices"] + NODE["devices"])


@pytest.mark.parametrize(
    ("architectures", "message"),
    [(None, "does not record"), ([], "does not record"), (["native"], "not resolved"), (["sm_90"], "not understood")],
)
def test_an_unknown_build_is_refused_on_a_gpu(architectures: list[str] | None, message: str) -> None:
    with pytest.raises(devices.DeviceError, match=message):
        devices.check_build_covers(architectures, NODE["devices"][:1])


def test_assigned_devices() -> None:
    env = {"CUDA_VISIBLE_DEVICES": "2"}
    assert [d["uuid"] for d in devices.assigned_devices(NODE, env, ["90-real"], cuda=True)] == [DEVICE_2]
    with pytest.raises(devices.DeviceError, match="compute capability 8.9"):
        devices.assigned_devices(MIXED, {"CUDA_VISIBLE_DEVICES": "1"}, ["90-real"], cuda=True)
    # No driver, or a CPU build: no device is the cell's, nothing to check.
    assert devices.assigned_devices({"nvml": "unavailable", "devices": []}, env, None, cuda=True) == []
    assert devices.assigned_devices(NODE, env, None, cuda=False) == []
