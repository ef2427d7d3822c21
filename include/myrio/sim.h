/* SPDX-License-Identifier: BSD-3-Clause */
/* The device model of the Myri-10G NIC, hosted in this process.
 *
 * A model "world" holds NICs named sim0, sim1, ... and the cables between them: by default
 * sim0<->sim1, sim2<->sim3, ... It runs either on a thread of its own (give it its own
 * core) or stepped: no thread, and myrio_sim_step runs one iteration of every NIC's
 * firmware loop, so tests are deterministic. Open its NICs with myrio_port_open("sim:sim0")
 * and conf.sim pointing at the world. The model daemon (myrio-simd) hosts the same code.
 */
#ifndef MYRIO_SIM_H
#define MYRIO_SIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct myrio_sim;

/* Cable faults, each a probability per frame, drawn from a generator seeded by seed. */
struct myrio_sim_faults {
	double loss, reorder, duplicate, corrupt;
	uint32_t flap_period_ms; /* 0 = no flaps; else the link goes down every period... */
	uint32_t flap_down_ms;   /* ...for this long */
};

struct myrio_sim_conf {
	unsigned nics;            /* default 2 */
	uint64_t link_bps;        /* default 10e9 (preamble, FCS and IFG counted); 0 = unlimited */
	bool stepped;             /* no thread: the caller drives myrio_sim_step */
	bool spin;                /* model thread never sleeps when idle (benchmarks) */
	uint32_t rx_ring_entries; /* per rx ring, power of 2; default 512 */
	uint32_t tx_ring_entries; /* send ring, power of 2; default 1024 */
	uint64_t seed;
	struct myrio_sim_faults faults;
	char product_code[32];    /* EEPROM PC=, default 10G-PCIE-8B-S */
	uint32_t boot_ms;         /* firmware boot time after a reset or reboot: the header
	                           * pointer reads 0 and nothing runs meanwhile; default 0 */
	bool high_rings;          /* ring and interrupt-word offsets above 2 MiB of BAR0 */
	bool unaligned_rc;        /* a root complex sending unaligned completions: UNALIGNED_TEST
	                           * fails, and an aligned image sends corrupted frames there */
	char eeprom_fw[16];       /* version of the power-on firmware, default 1.4.57; 1.4.4 to
	                           * 1.4.11 drop broadcasts unless ALLMULTI, as those did */
	uint32_t idle_ms;         /* a quiet model thread sleeps until a host posts work, looking
	                           * at its own timers (link flaps, boot) this often; 0 = 20 */
	char timing[16];          /* the NICs' own latencies and PCIe bandwidth: "none" (or
	                           * empty: a frame arrives as its last bit leaves) or "myri10ge"
	                           * (a Myri-10G on PCIe Gen1 x8, docs/device-model.md) */
	uint32_t idle_spin_us;    /* after its last work the thread polls this long before it
	                           * sleeps (at least 64 passes); default 0 */
};

void myrio_sim_conf_init(struct myrio_sim_conf *conf);
/* "nics=2,link=10g|1g|unlimited|<bps>,stepped,spin,seed=N,loss=P,reorder=P,dup=P,
 *  corrupt=P,flap=PERIOD_MS/DOWN_MS,rx_ring=N,tx_ring=N,pc=CODE,boot=MS,
 *  high_rings,eeprom_fw=[rss@]1.4.N|rss,unaligned_rc,idle_ms=MS,idle_spin_us=US,
 *  timing=none|myri10ge";
 *  eeprom_fw=rss: the power-on firmware is the RSS image (slices, for ports of several
 *  queues) */
int myrio_sim_conf_parse(struct myrio_sim_conf *conf, const char *spec);

int myrio_sim_create(struct myrio_sim **out, const struct myrio_sim_conf *conf);
void myrio_sim_destroy(struct myrio_sim *sim);

/* CPU time the model's own thread has used (pthread_getcpuclockid), in ns: the NIC's
 * share of a benchmark's cost. -ENOTSUP for a stepped model (it has no thread). */
int myrio_sim_thread_cpu_ns(struct myrio_sim *sim, uint64_t *ns);

/* Stepped mode: n iterations of every NIC's firmware loop. */
void myrio_sim_step(struct myrio_sim *sim, unsigned n);
/* The model's clock in ns, the one its ports' drivers read: model time advanced by
 * myrio_sim_step in stepped mode (give it to a stack as its clock), else the host's. */
uint64_t myrio_sim_now_ns(struct myrio_sim *sim);

/* A host interface as the far end of a model cable, in place of another model NIC:
 * "tap:IFNAME" (a TAP device, created if it does not exist), "packet:IFNAME" (an
 * AF_PACKET socket on an existing interface) or "shm:NAME/0" and "shm:NAME/1" (the two
 * ends of a cable to another process through shared memory, each process with its own
 * model: no fd, so that model spins or is stepped). Never blocks. */
struct myrio_sim_host;
struct myrio_sim_host_stats {
	uint64_t to_host, from_host; /* frames written to / read from the interface */
	uint64_t drops;		     /* frames the interface would not take */
};
int myrio_sim_host_open(struct myrio_sim_host **out, const char *spec);
/* A world of one NIC, sim0, whose cable ends at host (conf.nics is ignored). The world
 * owns host from then on, whatever the result: myrio_sim_destroy closes it. */
int myrio_sim_create_cabled(struct myrio_sim **out, const struct myrio_sim_conf *conf,
			    struct myrio_sim_host *host);
/* Without a model (a program bridging the interface to a port of its own): up to max
 * frames read from the interface, each given to fn; returns how many. */
unsigned myrio_sim_host_recv(struct myrio_sim_host *host,
			     void (*fn)(void *ctx, const uint8_t *frame, uint32_t len), void *ctx,
			     unsigned max);
void myrio_sim_host_send(struct myrio_sim_host *host, const uint8_t *frame, uint32_t len);
int myrio_sim_host_fd(struct myrio_sim_host *host); /* readable when recv has work, or -1 */
void myrio_sim_host_stats(const struct myrio_sim_host *host, struct myrio_sim_host_stats *st);
void myrio_sim_host_close(struct myrio_sim_host *host); /* one no world owns */

/* Changes a NIC's cable at run time (tests, fault injection). */
int myrio_sim_set_faults(struct myrio_sim *sim, const char *nic, const struct myrio_sim_faults *f);
int myrio_sim_set_link(struct myrio_sim *sim, const char *nic, bool up);

#ifdef __cplusplus
}
#endif
#endif
