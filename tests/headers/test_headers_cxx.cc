// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The header-compile test as C++17: every public header compiles alone
// under g++ -std=c++17 -pedantic -Wall -Wextra, extern "C" linkage and all
// (the program links against the C library and calls it).
#include "test_headers.c"
