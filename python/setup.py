"""Builds the ssmtune package with its compiled files inside it.

setuptools drives CMake: build_py configures the repository (tests off),
builds only libssmtune.so, the abi3 extension _ssmtune_ext.abi3.so and the
`ssmtune` command, and copies the three into the package, where they find
each other through $ORIGIN (nothing to set at run time). The wheel is tagged
cp310-abi3-linux_x86_64: one wheel for every CPython >= 3.10 on x86-64 Linux.
Used from python/ and, through the repository root's setup.py, from the root.
Environment: SSMTUNE_CMAKE_ARGS (extra configure arguments), SSMTUNE_BUILD_JOBS.
"""
import os
import shlex
import shutil
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - setuptools >= 70 ships its own
    from setuptools.command.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the CMake project
BUILT = ("libssmtune.so", "_ssmtune_ext.abi3.so", "ssmtune")


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_dir = Path(self.get_finalized_command("build").build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     "-DSSMTUNE_BUILD_TESTS=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if shutil.which("ccache"):
            configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        configure += shlex.split(os.environ.get("SSMTUNE_CMAKE_ARGS", ""))
        if (build_dir / "CMakeCache.txt").exists():
            configure = [a for a in configure if a not in ("-G", "Ninja")]  # keep its generator
        jobs = os.environ.get("SSMTUNE_BUILD_JOBS", str(os.cpu_count() or 2))
        self.spawn(configure)
        self.spawn(["cmake", "--build", str(build_dir), "-j", jobs, "--target", "ssmtune_shared",
                    "ssmtune", "ssmtune_ext"])
        package = Path(self.build_lib) / "ssmtune"
        package.mkdir(parents=True, exist_ok=True)
        for name in BUILT:
            src = build_dir / name
            if not src.is_file():
                raise RuntimeError(f"ssmtune: the CMake build made no {name} (in {build_dir})")
            shutil.copy2(src, package / name)


class AbiWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False  # it carries ELF files: a platform wheel

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "cp310", "abi3", plat


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # the package holds ELF files: install to platlib, the wheel's root


def package_dir():
    rel = os.path.relpath(HERE, os.getcwd())
    return {} if rel == "." else {"": rel}


if __name__ == "__main__":
    setup(
        packages=["ssmtune"],
        package_dir=package_dir(),
        cmdclass={"build_py": BuildWithCMake, "bdist_wheel": AbiWheel},
        distclass=BinaryDistribution,
        options={"build": {"build_base": os.path.join(os.path.relpath(HERE, os.getcwd()),
                                                      "build", "pip")}},
        zip_safe=False,
    )
