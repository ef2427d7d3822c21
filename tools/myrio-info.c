/* SPDX-License-Identifier: BSD-3-Clause */
/* myrio-info: what a port says about itself: the generic info, its driver's attributes
 * (a Myri-10G's firmware, serial number, buffer sizes) and every counter.
 *
 *   myrio-info [--firmware FILE] [--sim SPEC] [--mtu N] DEVICE
 *
 * DEVICE is sim:NAME (a NIC of a model world this program creates; SPEC configures it, see
 * myrio_sim_conf_parse), simd:NAME[@SOCKET] or a PCI address bound to vfio-pci.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "myrio/myrio.h"

static void usage(void)
{
	fprintf(stderr, "usage: myrio-info [--firmware FILE] [--sim SPEC] [--mtu N] DEVICE\n"
			"  DEVICE: sim:sim0 (own in-process model), simd:nic0[@socket], "
			"0000:03:00.0 (vfio-pci)\n");
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"firmware", required_argument, 0, 'f'},
					     {"sim", required_argument, 0, 's'},
					     {"mtu", required_argument, 0, 'm'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	struct myrio_port_conf conf;
	myrio_port_conf_init(&conf);
	const char *sim_spec = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "f:s:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			conf.firmware = optarg;
			break;
		case 's':
			sim_spec = optarg;
			break;
		case 'm':
			conf.mtu = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		usage();
		return 2;
	}
	const char *device = argv[optind];

	struct myrio_sim *sim = NULL;
	if (strncmp(device, "sim:", 4) == 0) {
		struct myrio_sim_conf sc;
		myrio_sim_conf_init(&sc);
		if (sim_spec && myrio_sim_conf_parse(&sc, sim_spec) < 0) {
			fprintf(stderr, "myrio-info: bad --sim spec '%s'\n", sim_spec);
			return 2;
		}
		int rc = myrio_sim_create(&sim, &sc);
		if (rc < 0) {
			fprintf(stderr, "myrio-info: cannot create the device model: %s\n",
				strerror(-rc));
			return 1;
		}
		conf.sim = sim;
	}
	struct myrio_port *port;
	int rc = myrio_port_open(&port, device, &conf);
	if (rc < 0) {
		fprintf(stderr, "myrio-info: cannot open %s: %s\n", device, strerror(-rc));
		myrio_sim_destroy(sim);
		return 1;
	}
	/* The link state arrives with the first status update after ETHERNET_UP (§6.3). */
	int link = myrio_port_link(port);
	for (int i = 0; i < 200 && link == MYRIO_LINK_UNKNOWN; i++) {
		sleep_ms(1);
		link = myrio_port_link(port);
	}
	struct myrio_port_info in;
	myrio_port_info(port, &in);
	printf("device          %s (%s bus, driver %s)\n", in.device, in.bus, in.driver);
	printf("MAC             %02x:%02x:%02x:%02x:%02x:%02x\n", in.mac[0], in.mac[1], in.mac[2],
	       in.mac[3], in.mac[4], in.mac[5]);
	printf("link            %s\n", link == MYRIO_LINK_UP	 ? "up"
				       : link == MYRIO_LINK_DOWN ? "down"
								 : "unknown");
	printf("MTU             %u (max frame %u)\n", in.mtu, in.max_frame);
	printf("rings           send %u, receive %u per ring; tx boundary %u\n", in.tx_ring_entries,
	       in.rx_ring_entries, in.tx_boundary);
	printf("caps           %s%s%s%s\n", in.caps & MYRIO_CAP_TX_CSUM ? " tx-csum" : "",
	       in.caps & MYRIO_CAP_RX_CSUM_PARTIAL ? " rx-csum-partial" : "",
	       in.caps & MYRIO_CAP_TSO ? " tso" : "", in.caps & MYRIO_CAP_IRQ ? " irq" : "");
	/* What only this driver knows: firmware, serial number, buffer sizes... */
	int na = myrio_port_attrs(port, NULL, 0);
	struct myrio_port_attr *attrs = na > 0 ? calloc((size_t)na, sizeof(*attrs)) : NULL;
	if (attrs && myrio_port_attrs(port, attrs, (unsigned)na) == na) {
		printf("driver\n");
		for (int i = 0; i < na; i++)
			printf("  %-32s %s\n", attrs[i].name, attrs[i].value);
	}
	free(attrs);
	/* Every counter: the generic ones, then the driver's own. */
	int nx = myrio_port_xstats_names(port, NULL, 0);
	struct myrio_xstat_name *names = nx > 0 ? calloc((size_t)nx, sizeof(*names)) : NULL;
	uint64_t *values = nx > 0 ? calloc((size_t)nx, sizeof(*values)) : NULL;
	if (names && values && myrio_port_xstats_names(port, names, (unsigned)nx) == nx &&
	    myrio_port_xstats(port, values, (unsigned)nx) == nx) {
		printf("counters\n");
		for (int i = 0; i < nx; i++)
			printf("  %-32s %llu\n", names[i].name, (unsigned long long)values[i]);
	}
	free(names);
	free(values);
	myrio_port_close(port);
	myrio_sim_destroy(sim);
	return 0;
}
