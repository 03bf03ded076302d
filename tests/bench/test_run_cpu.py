"""bench/run_cpu.py: each process's CPU summed over its tree of children, from dump-acct's lines."""

from bench import run_cpu


def record(name: str, user: float, system: float, pid: int, parent: int) -> str:
    """One line as dump-acct prints it: the times in ticks, then elapsed, uid, gid, memory, io, pid, ppid, …"""
    fields = [f"{name:<15} ", "v3", f"{user:8.2f}", f"{system:8.2f}", "  300.00", "0", "0", " 9000.00", "0.00"]
    return "|".join([*fields, f"{pid:8}", f"{parent:8}", "     ", "0", "__      ", "Mon Dec  7 13:49:13 2026"])


# A shell (pid 10) runs a suite (11) whose worker (12) started two servers and a short helper, beside a check
# (20); pid 30's parent was never accounted (it ended before accton).
DUMP = "\n".join(
    [
        record("bash", 0, 0, 10, 1),
        record("python", 200, 40, 11, 10),
        record("python", 1000, 200, 12, 11),
        record("lancelot", 110, 17, 13, 12),
        record("lance_backgroun", 100, 27, 14, 12),
        record("lancelot-init", 10, 1, 15, 12),
        record("mypy", 2000, 70, 20, 10),
        record("ray::IDLE", 80, 0, 30, 4242),
    ]
)


def test_each_tree_sums_its_processes_and_the_roots_come_largest_first():
    tree = run_cpu.Tree(run_cpu.parse(DUMP))
    assert tree.processes[12] == run_cpu.Process("python", 12.0, 11)
    assert round(tree.total(12), 2) == 14.65  # its own 12.0, two servers 1.27 each, the helper 0.11
    assert round(tree.total(10), 2) == 37.75  # with the suite's own 2.4 and the check's 20.7
    assert tree.roots() == [10, 30]  # pid 1 and pid 4242 were never accounted


def test_small_children_are_grouped_by_name_under_the_least_shown():
    tree = run_cpu.Tree(run_cpu.parse(DUMP))
    assert tree.lines(12, depth=1, least=1.0) == [
        "12 python: 14.7 CPU-s (12.0 its own)",
        "  13 lancelot: 1.3 CPU-s (1.3 its own)",
        "  14 lance_backgroun: 1.3 CPU-s (1.3 its own)",
        "  1 × lancelot-init: 0.1 CPU-s (1 processes)",
    ]
    assert tree.lines(12, depth=0, least=1.0) == ["12 python: 14.7 CPU-s (12.0 its own)"]


def test_lines_that_are_not_records_are_passed_over():
    assert run_cpu.parse("\nnot a record\n") == {}
