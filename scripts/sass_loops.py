#!/usr/bin/env python3
"""Static SASS instruction counts of a kernel's loops, without a GPU.

Compiles the given backward or forward configs with `ssmtune compile
--cubin-dir`, disassembles each cubin with nvdisasm and prints, per kernel,
its total instruction count and, per loop (a backward branch), the body's
length and opcode mix: how many instructions a config's inner loops issue per
warp, to compare kernel variants before a GPU run.

The toolkit here (CUDA 13) ships no disassembler. Debian's non-free
nvidia-cuda-toolkit (11.8) has nvdisasm, which reads sm_90 code once the
cubin's ELF header is rewritten in the older encoding (OS/ABI 0x33, ABI
version 7, e_flags for sm_90); --get-nvdisasm fetches it (apt-get download
into ~/.cache/ssmtune-sass, nothing installed). Static counts only: a loop's
trip count and the time it takes are for the GPU to show.

With --against DIR (a templates/ folder of another tree, e.g. `git archive
REV templates | tar -x -C /tmp/old`) the same configs are compiled from both
and the two reports are diffed: a change meant to leave some kernels'
code alone shows them as the same, instruction for instruction per loop.

  scripts/sass_loops.py --get-nvdisasm
  scripts/sass_loops.py --family bwd --dtype bf16 --with-d --with-z \\
      --delta-bias --softplus --config seq.K16.D32.fp32.t128.s4.fast.b3
  scripts/sass_loops.py --against /tmp/old/templates --family fwd --config \\
      warpscan.K2048.D1.fp32.t512.i4.s1.fast
"""
import argparse
import collections
import difflib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CACHE = os.path.expanduser("~/.cache/ssmtune-sass")
SOURCES = "/etc/apt/sources.list.d/ssmtune-nonfree.sources"


def nvdisasm_path():
    for cand in (os.environ.get("NVDISASM"), shutil.which("nvdisasm"),
                 os.path.join(CACHE, "usr/bin/nvdisasm")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def get_nvdisasm():
    """Downloads Debian's nvidia-cuda-toolkit package and unpacks it into the cache."""
    os.makedirs(CACHE, exist_ok=True)
    if not os.path.exists(SOURCES):
        with open(SOURCES, "w") as f:
            f.write("Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                    "Components: contrib non-free\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
        subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "download", "nvidia-cuda-toolkit"], cwd=CACHE, check=True)
    debs = [f for f in os.listdir(CACHE) if f.startswith("nvidia-cuda-toolkit") and f.endswith(".deb")]
    if not debs:
        sys.exit("sass_loops: apt-get download left no nvidia-cuda-toolkit package")
    subprocess.run(["dpkg-deb", "-x", os.path.join(CACHE, sorted(debs)[-1]), CACHE], check=True)
    print("nvdisasm:", nvdisasm_path())


def old_header(cubin, out):
    """A copy of `cubin` with the ELF header in the encoding nvdisasm 11.8 reads (sm_90)."""
    data = bytearray(open(cubin, "rb").read())
    if data[:4] != b"\x7fELF":
        sys.exit(f"sass_loops: {cubin} is not an ELF file")
    flags = struct.unpack_from("<I", data, 48)[0]
    if data[7] == 0x41:  # the CUDA 12.8+ encoding: the SM in bits 8-15
        sm = (flags >> 8) & 0xFF
        data[7], data[8] = 0x33, 7
        struct.pack_into("<I", data, 48, (sm << 16) | 0x500 | sm)
    with open(out, "wb") as f:
        f.write(data)


def disassemble(nvdisasm, cubin):
    with tempfile.TemporaryDirectory() as tmp:
        patched = os.path.join(tmp, "k.cubin")
        old_header(cubin, patched)
        res = subprocess.run([nvdisasm, "-c", patched], capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"sass_loops: nvdisasm failed on {cubin}: {res.stderr.strip()}")
        return res.stdout


def opcode(ins):
    ins = re.sub(r"^@!?U?P\w+\s+", "", ins)  # predicate guard
    return ins.split()[0].split(".")[0]


def report(sass):
    """Per kernel: its instruction count and each loop's length and opcode mix."""
    lines = []
    parts = re.split(r"\n//-+ \.text\.(\S+) -+\n", sass)
    for name, body in zip(parts[1::2], parts[2::2]):
        ins, labels = [], {}
        for line in body.split("\n"):
            m = re.match(r"^\s*(\.L_x_\d+):", line)
            if m:
                labels[m.group(1)] = len(ins)
                continue
            m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
            if m:
                ins.append(m.group(1).strip())
        demangled = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
        lines += [demangled or name, f"  {len(ins)} instructions"]
        for idx, text in enumerate(ins):
            m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", text)
            if not m or labels.get(m.group(1), idx + 1) > idx:
                continue
            lo = labels[m.group(1)]
            ops = collections.Counter(opcode(x) for x in ins[lo:idx + 1])
            mix = " ".join(f"{k}:{v}" for k, v in ops.most_common(12))
            lines.append(f"  loop [{lo}, {idx}] {idx - lo + 1} instructions: {mix}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Other arguments go to `ssmtune compile` as they are.")
    ap.add_argument("--get-nvdisasm", action="store_true", help="fetch nvdisasm and exit")
    ap.add_argument("--cubin", action="append", default=[], help="report these cubins instead")
    ap.add_argument("--ssmtune", default=os.environ.get("SSMTUNE", "build/ssmtune"))
    ap.add_argument("--against", metavar="DIR",
                    help="also compile from this templates folder and diff the two reports")
    args, compile_args = ap.parse_known_args()
    if args.get_nvdisasm:
        get_nvdisasm()
        return
    nvdisasm = nvdisasm_path()
    if nvdisasm is None:
        sys.exit("sass_loops: nvdisasm not found (set NVDISASM, or run with --get-nvdisasm)")
    if args.against:
        if args.cubin:
            sys.exit("sass_loops: --against compiles; it takes no --cubin")
        theirs = reports(nvdisasm, args, compile_args, args.against)
        ours = reports(nvdisasm, args, compile_args, None)
        diff = list(difflib.unified_diff(theirs, ours, args.against, "the binary's templates",
                                         lineterm=""))
        print("\n".join(diff) if diff else f"same SASS loops as {args.against}")
        return
    print("\n".join(reports(nvdisasm, args, compile_args, None)))


def reports(nvdisasm, args, compile_args, template_dir):
    """The report lines of --cubin files, or of `ssmtune compile`'s cubins
    (from template_dir's templates when given, else the binary's own)."""
    cubins = args.cubin
    env = dict(os.environ)
    if template_dir:
        env["SSMTUNE_TEMPLATE_DIR"] = template_dir
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        if not cubins:
            subprocess.run([args.ssmtune, "compile", "--cubin-dir", tmp, *compile_args], check=True,
                           stdout=subprocess.DEVNULL, env=env)
            cubins = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".cubin"))
        for cubin in cubins:
            lines += report(disassemble(nvdisasm, cubin))
    return lines


if __name__ == "__main__":
    main()
