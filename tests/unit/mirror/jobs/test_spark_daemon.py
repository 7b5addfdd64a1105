"""Which zips the local executors' daemon drops from its path: only those of the installed PySpark package whose
code is installed too (a pure function of the path and the files on it)."""

from __future__ import annotations

from pathlib import Path

from mirror.jobs.spark_daemon import without_bundled_zips


def site(root: Path, py4j_version: str | None = "0.10.9.9") -> Path:
    """A site directory holding a ``pyspark`` package with its ``python/lib`` zips (and ``py4j``, installed)."""
    lib = root / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (root / "pyspark" / "__init__.py").write_text("")
    for name in ("pyspark.zip", "py4j-0.10.9.9-src.zip"):
        (lib / name).write_bytes(b"")
    if py4j_version is not None:
        (root / "py4j").mkdir()
        (root / "py4j" / "__init__.py").write_text("")
        info = root / f"py4j-{py4j_version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: py4j\nVersion: {py4j_version}\n")
    return root


def test_the_installed_packages_zips_are_dropped_and_every_other_entry_kept(tmp_path: Path) -> None:
    packages = site(tmp_path / "site")
    lib = packages / "pyspark" / "python" / "lib"
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(tmp_path / "app.zip"), str(packages)]
    assert without_bundled_zips(path) == [str(tmp_path / "app.zip"), str(packages)]


def test_a_py4j_zip_of_another_version_than_the_installed_one_stays(tmp_path: Path) -> None:
    packages = site(tmp_path / "site", py4j_version="0.10.9.7")
    lib = packages / "pyspark" / "python" / "lib"
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(packages)]
    assert without_bundled_zips(path) == [str(lib / "py4j-0.10.9.9-src.zip"), str(packages)]


def test_without_an_installed_py4j_only_pysparks_zip_goes(tmp_path: Path) -> None:
    packages = site(tmp_path / "site", py4j_version=None)
    lib = packages / "pyspark" / "python" / "lib"
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(packages)]
    assert without_bundled_zips(path) == [str(lib / "py4j-0.10.9.9-src.zip"), str(packages)]


def test_zips_of_another_spark_installation_stay(tmp_path: Path) -> None:
    packages = site(tmp_path / "site")
    other = site(tmp_path / "spark-home") / "pyspark" / "python" / "lib"
    path = [str(other / "pyspark.zip"), str(other / "py4j-0.10.9.9-src.zip"), str(packages)]
    assert without_bundled_zips(path) == path


def test_no_installed_pyspark_keeps_the_path(tmp_path: Path) -> None:
    lib = tmp_path / "spark" / "python" / "lib"
    path = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(tmp_path)]
    assert without_bundled_zips(path) == path
