#!/usr/bin/env python3
"""Regenerates pow_golden.txt: CPython's float ** float on (x, y) pairs.

Each line is "x y result" with x and y as float.hex() and result either a
float.hex() or the name of what Python did instead: ZeroDivisionError,
OverflowError, ValueError or complex (a negative base with a fractional
exponent gives a complex number in Python 3). Deterministic (fixed seed).
The files were produced by CPython 3.11.7 on x86-64 Linux (glibc 2.36) on
a CPU with FMA and AVX2, where glibc runs its FMA build of pow:

    python3 gen_pow_golden.py > pow_golden.txt

and with glibc told to ignore those CPU features, so that it runs its
plain (SSE2) build instead:

    GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA python3 gen_pow_golden.py > pow_golden_nofma.txt
"""
import math
import os
import random
import struct
import sys

rng = random.Random(20240611)


def bits_to_float(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def rand_double():
    """A finite double with uniformly random bits."""
    while True:
        f = bits_to_float(rng.getrandbits(64))
        if math.isfinite(f):
            return f


cases = []
add = cases.append

# The examples from the bug report.
for x, y in [(100.0, 1.5), (1.05, 30.0), (1.1, 10.0), (1.001, 365.0), (1e22, 10.0),
             (2.0, 0.5), (10.0, -2.0), (0.1, 3.0), (3.0, 1 / 3), (7.0, 2.0)]:
    add((x, y))

# Special values.
specials = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -1.5,
            math.inf, -math.inf, math.nan, 5e-324, -5e-324, 1.7976931348623157e308,
            -1.7976931348623157e308, 2.2250738585072014e-308, 1e300, 1e-300,
            0.9999999999999999, 1.0000000000000002, 2.0 ** 63, -(2.0 ** 63),
            2.0 ** 53 + 1, 2.0 ** -66, -(2.0 ** -66), 1e-20, 1075.0, -1075.0]
for x in specials:
    for y in specials:
        add((x, y))

# Uniformly random bit patterns (mostly overflow/underflow/domain cases).
for _ in range(300):
    add((rand_double(), rand_double()))

# Random moderate bases and exponents.
for _ in range(800):
    x = rng.uniform(0, 10) if rng.random() < 0.5 else math.exp(rng.uniform(-50, 50))
    y = rng.uniform(-20, 20)
    add((x, y))

# Results spread across the whole range, including overflow and underflow.
for _ in range(600):
    x = math.exp(rng.uniform(-700, 700))
    target = rng.uniform(-760, 720)
    ln = math.log(x)
    y = target / ln if ln != 0 else 1.0
    add((x, y))

# Integer exponents.
for _ in range(600):
    x = rng.uniform(-100, 100) if rng.random() < 0.7 else rng.choice([1.05, 1.1, 0.9, 1.001, 10.0, 2.0, 3.0, 7.0, 0.1])
    y = float(rng.randint(-60, 60))
    add((x, y))

# Halves and quarters.
for _ in range(300):
    x = rng.uniform(0, 1000)
    y = rng.randint(-40, 40) / rng.choice([2, 4])
    add((x, y))

# Bases near 1 and big exponents.
for _ in range(500):
    x = 1.0 + rng.uniform(-1e-3, 1e-3) * 10.0 ** -rng.randint(0, 12)
    y = rng.uniform(-1, 1) * 10.0 ** rng.randint(0, 18)
    add((x, y))
for k in range(1, 40):
    add((1.0 + k * 2.0 ** -52, 2.0 ** 52 * rng.uniform(0.5, 800)))
    add((1.0 - k * 2.0 ** -53, 2.0 ** 53 * rng.uniform(0.5, 800)))

# Huge and tiny values, subnormal bases and results.
for _ in range(400):
    x = math.ldexp(rng.uniform(0.5, 1), rng.randint(-1074, 1024))
    y = rng.choice([rng.uniform(-3, 3), float(rng.randint(-4, 4)), rng.uniform(-1e-3, 1e-3),
                    rng.uniform(-1e-18, 1e-18), rng.uniform(-1e-25, 1e-25)])
    add((x, y))
for _ in range(200):
    x = bits_to_float(rng.randint(1, (1 << 52) - 1))  # subnormal
    y = rng.uniform(-1.2, 1.2)
    add((x, y))
for _ in range(200):
    # results near the subnormal boundary and around the overflow threshold
    x = rng.uniform(1.5, 3)
    y = rng.uniform(-1080, -1015) / math.log2(x) if rng.random() < 0.5 else rng.uniform(1020, 1026) / math.log2(x)
    add((x, y))

# Tiny and huge exponents.
for _ in range(200):
    x = rng.uniform(0.01, 100)
    y = math.ldexp(rng.uniform(-1, 1), rng.randint(-80, -50)) if rng.random() < 0.5 else math.ldexp(rng.uniform(-1, 1), rng.randint(55, 70))
    add((x, y))

# Negative bases with integer (and some fractional) exponents.
for _ in range(400):
    x = -rng.uniform(0, 50) if rng.random() < 0.8 else -math.exp(rng.uniform(-300, 300))
    y = float(rng.randint(-80, 80)) if rng.random() < 0.8 else rng.uniform(-5, 5)
    add((x, y))
for _ in range(50):
    add((-rng.uniform(0.9, 1.1), float(rng.randint(-(1 << 62), 1 << 62))))

# Inputs where glibc's two x86-64 builds of pow (the FMA one and the plain
# SSE2 one) round differently, found by comparing both on random inputs.
FMA_SENSITIVE = [
    ("0x1.9cbd806a01a0cp-836", "0x1.8b22322651b6cp-4"),
    ("0x1.ade9eef8e6c70p+9", "0x1.8400000000000p+6"),
    ("0x1.c3b23f73da644p-763", "0x1.38fbffdb2ea6ap-1"),
    ("0x1.27b81e4f6a97ap+1", "-0x1.70078d72447f6p+5"),
    ("0x1.3393d86dae577p+675", "0x1.76b1941c10093p-3"),
    ("0x1.66cde54b77f14p+717", "0x1.8969c6e42d5d9p-1"),
    ("0x1.33df7202f5b3bp+2", "0x1.5ed8dacc1d6acp+4"),
    ("0x1.1f97ce45d4ef7p-273", "-0x1.c209f28f25e79p+0"),
    ("0x1.10a0f39889bbep-979", "-0x1.e9321273bb7c4p-2"),
    ("-0x1.78bdce0463fc0p+8", "0x1.5000000000000p+6"),
    ("0x1.0f21db932cdc4p+1", "0x1.efa189940e8e0p+4"),
    ("0x1.25305c3cc41c2p-505", "-0x1.0f0a7be0f2510p+0"),
    ("0x1.0000000000003p+0", "0x1.683518405b8aap+51"),
    ("0x1.15fb4d10ab995p+2", "0x1.169dda4c86deap+5"),
    ("0x1.b892b999ba794p+0", "-0x1.4e2671041e914p+5"),
    ("0x1.bf79fee9c69f8p+8", "-0x1.2800000000000p+6"),
    ("0x1.0000000041059p+0", "-0x1.61bcb6d66998ep+40"),
    ("0x1.57fff24169690p+7", "-0x1.9800000000000p+5"),
    ("0x1.a82b07792f0c6p+807", "0x1.1b965b02e460cp+0"),
    ("0x1.0cbdc8367abebp+2", "-0x1.eb1e2ccdc793bp+4"),
    ("-0x1.0d70891139e9ep+9", "0x1.8400000000000p+6"),
    ("0x1.4c297d5394411p+2", "0x1.3f05ec7e5027cp+5"),
    ("0x1.3188d73943552p+1", "-0x1.4bc0498810f99p+5"),
    ("0x1.be8b90daa96eep+1", "-0x1.da25c2901ff08p+2"),
    ("0x1.407022e86f618p+41", "-0x1.e0540337e05e8p-2"),
    ("0x1.7ddcb0ce42cc0p+1", "-0x1.06a249ca93d88p+2"),
    ("0x1.04011957b9f10p+627", "0x1.0aef0786ec254p+0"),
    ("0x1.219407b50594cp+2", "0x1.8ac837106a380p+1"),
    ("0x1.22ae5d0cba4c0p+8", "-0x1.4400000000000p+6"),
    ("0x1.35f6ff88c16d7p+3", "0x1.eff02697717d0p+3"),
    ("0x1.08e17b8f0cb98p-2", "0x1.3029a592fd1e8p+2"),
    ("0x1.564a780808844p+1", "0x1.bd2a8d553a898p+4"),
    ("0x1.30ea5b3f3a25bp+3", "0x1.21a38d36ba274p+3"),
    ("0x1.0279ec944e59fp+0", "0x1.c5ad41623e000p-2"),
    ("0x1.03b75e40733e2p-552", "-0x1.d739ff85d9476p+0"),
    ("0x1.17038644114d0p+1", "0x1.45a3c38d3f548p+4"),
    ("0x1.3acf74c484c2fp+3", "-0x1.320cb61b422b4p+3"),
    ("0x1.97f20e90a2379p-884", "-0x1.614c73df8d79ep-2"),
    ("0x1.4c78b273bd0d8p-3", "-0x1.5146ac69f58cap+5"),
    ("0x1.09a1777d0200ep-533", "0x1.3ace2bd0e1ecfp+0"),
    ("0x1.1e24aed108935p+365", "0x1.6deb2ab0ca7aap+0"),
    ("0x1.04d0c231d2368p+3", "0x1.539a49bd2b9f4p+4"),
    ("0x1.547c02d6c0ee0p+2", "0x1.5a96b4a86a3fep+5"),
    ("0x1.aab9e49d38956p+1", "-0x1.6844e355688f0p+5"),
    ("0x1.7b02d1ea43404p+587", "-0x1.f0a278b966bf7p-1"),
    ("0x1.d947e29138a63p+2", "0x1.a0dad5dfc5b68p+2"),
    ("0x1.9de200602b44cp-273", "0x1.f65f45eb60116p+0"),
    ("0x1.28e7354aff1a6p+3", "-0x1.a98b299131140p+1"),
    ("0x1.f966455118e34p-769", "0x1.4931429566581p-1"),
    ("0x1.2a7dbdf98ab7dp-444", "-0x1.cd572b40605f3p+0"),
    ("0x1.02ee887a358f8p+38", "-0x1.95c9ab813eb0bp-1"),
    ("0x1.fd6f225f4c344p-120", "0x1.a8f6f62fe6f90p-1"),
    ("0x1.c1f9962b04120p+1", "0x1.2069ae03f1f00p+4"),
    ("0x1.3542a795b8e79p+3", "-0x1.4f4d6cfeff955p+5"),
    ("0x1.7351abf7d5118p+8", "0x1.8000000000000p+4"),
    ("0x1.064cb3b8d9c8ap+956", "-0x1.29dfba3a4212ap-4"),
    ("0x1.61655d380fd57p+486", "0x1.99b3b10ef639cp-1"),
    ("-0x1.41210389bfd7ep+9", "-0x1.1c00000000000p+6"),
    ("0x1.99f0cdc4e704ep+2", "0x1.83ee406ea5e14p+5"),
    ("0x1.7f138bb8eb559p+550", "0x1.5409ece57827cp+0"),
    ("0x1.2613adef9f35ep+680", "0x1.3f3ec2fba0baep-1"),
    ("0x1.07dc60acac99cp+3", "-0x1.8041c19729ac2p+5"),
    ("0x1.f40d52bfebc20p+0", "0x1.98fe3dcc83ac8p+4"),
    ("0x1.e93c227d83acap+430", "-0x1.7c29651286c0dp-1"),
    ("0x1.c998fc19f5068p+8", "-0x1.8000000000000p+2"),
    ("0x1.6c6283be48444p+9", "-0x1.3000000000000p+6"),
    ("0x1.42c105c3b82e0p-3", "-0x1.e91f695c62750p+3"),
    ("0x1.0670fb558542fp+815", "-0x1.4be09fb5ebafcp-2"),
    ("0x1.cbd9df0afbc66p+2", "-0x1.d78d112c69f61p+4"),
    ("0x1.444e8e7b4050cp+8", "0x1.3800000000000p+6"),
    ("0x1.33b93b0adc5edp-470", "-0x1.7227bc0d0355dp-1"),
    ("0x1.404dbe6b53cd8p-1", "0x1.8d7ae52bcfa66p+5"),
    ("0x1.bdaae464bbc6ap+2", "-0x1.907d2659902e4p+4"),
    ("0x1.9a6f15f714df5p+693", "-0x1.b8624eb905f49p-2"),
    ("-0x1.ac5c95e9e0674p+9", "0x1.c000000000000p+3"),
    ("0x1.650b34fbed76cp+1", "0x1.fb8fe072e3ea0p+4"),
    ("0x1.be19e664b4103p+74", "0x1.6f7a987472fe1p+3"),
    ("-0x1.046ec8f740c6cp+7", "0x1.4000000000000p+5"),
    ("0x1.99fddf6aedbc4p-1", "0x1.c0586f145bf48p+4"),
    ("0x1.d3a3f01619fc0p+283", "0x1.b0f3927a869dcp-1"),
]
for xs, ys in FMA_SENSITIVE:
    add((float.fromhex(xs), float.fromhex(ys)))


def result(x, y):
    try:
        r = x ** y
    except ZeroDivisionError:
        return "ZeroDivisionError"
    except OverflowError:
        return "OverflowError"
    except ValueError:
        return "ValueError"
    if isinstance(r, complex):
        return "complex"
    return r.hex()


out = sys.stdout
out.write("# CPython %s float pow golden data, generated by gen_pow_golden.py (GLIBC_TUNABLES=%s)\n"
          % (sys.version.split()[0], os.environ.get("GLIBC_TUNABLES", "")))
out.write("# x y x**y (float.hex, or the exception / 'complex')\n")
for x, y in cases:
    out.write("%s %s %s\n" % (x.hex(), y.hex(), result(x, y)))
