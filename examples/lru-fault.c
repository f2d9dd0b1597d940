// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
int main(void) { return 0; }
