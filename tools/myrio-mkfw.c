/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes a firmware image the device model accepts at boot handoff (spec §2.2, §2.4):
 *   myrio-mkfw FLAVOUR[@VERSION] OUTPUT
 * FLAVOUR: eth (aligned), ethp (unaligned, tx_boundary 2048), rss_eth, rss_ethp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fw_image.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s eth|ethp|rss_eth|rss_ethp[@1.4.N] OUTPUT\n", argv[0]);
		return 2;
	}
	static uint8_t buf[256 * 1024];
	size_t len = 0;
	if (sim_fw_image_build(buf, sizeof(buf), argv[1], &len) != 0) {
		fprintf(stderr,
			"%s: unknown flavour '%s' (eth, ethp, rss_eth, rss_ethp, "
			"optionally @VERSION)\n",
			argv[0], argv[1]);
		return 2;
	}
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
