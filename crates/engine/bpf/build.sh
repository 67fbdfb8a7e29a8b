#!/usr/bin/env bash
# Rebuilds xsk_redirect.bpf.o from xsk_redirect.bpf.c. Needs clang and libbpf's
# headers (Debian: apt-get install clang libbpf-dev). The object is committed;
# rerun this after changing the C source and commit both.
set -euo pipefail
cd "$(dirname "$0")"
arch=$(uname -m | sed 's/x86_64/x86_64-linux-gnu/; s/aarch64/aarch64-linux-gnu/')
clang -O2 -g -target bpf -I"/usr/include/$arch" \
    -c xsk_redirect.bpf.c -o xsk_redirect.bpf.o
# Debug line info names this machine's paths; BTF (kept) is what loading needs.
llvm-strip --strip-debug --keep-section=.BTF xsk_redirect.bpf.o 2>/dev/null \
    || llvm-strip-14 --strip-debug xsk_redirect.bpf.o
