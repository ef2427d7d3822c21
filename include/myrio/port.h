/* SPDX-License-Identifier: BSD-3-Clause */
/* The port: one NIC (one slice) as the application sees it.
 *
 * Device strings, chosen at run time:
 *   "sim:NAME"          a NIC of an in-process device model (conf.sim), see sim.h
 *   "simd:NAME[@SOCK]"  a NIC hosted by the model daemon, attached through its UNIX socket
 *   "0000:03:00.0"      a PCI function bound to vfio-pci, driven by the driver that claims
 *                       its IDs: a Myri-10G board, or an Intel 82574 (e1000e)
 *   "pair:LINK/0", "pair:LINK/1"  the two ends of an in-memory link in this process (no
 *                       NIC, for tests), with options after '?': loss=P, dup=P,
 *                       reorder=P, seed=N, ring=N, rxpool=N, nocsum
 *
 * Teardown, the one order everywhere: stacks (myrio_stack_destroy), then pools
 * (myrio_pool_destroy), then the port (myrio_port_close). Buffers the NIC still holds are
 * not freed under it: a pool destroyed early lives on until the port has them back. The
 * stacks of one port's queues (myrio_stack_create_queue) go in any order, the first one
 * made included.
 *
 * Every call returns 0 or a negative errno and logs a message that says what to do.
 * rx_burst/tx_burst never block and never allocate beyond the port's pools.
 */
#ifndef MYRIO_PORT_H
#define MYRIO_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "myrio/pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct myrio_port;
struct myrio_sim;

struct myrio_port_conf {
	uint32_t mtu;	       /* IP MTU, 68..9000; 0 = 1500 */
	uint32_t rx_pool_size; /* receive buffers per ring beyond the ring; 0 = default */
	uint32_t intr_coal_us; /* interrupt coalescing delay (§6.6); 0 = immediate */
	bool promisc;	       /* receive frames for any MAC */
	bool adopt_firmware;   /* true: keep the running firmware (§2.3) when no image given */
	const char *firmware;  /* image to load and hand off (§2.2, §2.4), NULL = adopt */
	struct myrio_sim *sim; /* in-process model hosting "sim:" devices */
	uint32_t watchdog_ms;  /* NIC reboot check period (myri10ge); 0 = 1000, UINT32_MAX = off */
	bool irq;	       /* MSI wired at open for myrio_port_irq_fd; false: polled, INTx
				* masked at the device (docs/driver.md "Real hardware") */
	/* Driver arguments, "key=value,key=value": settings only one driver has (the
	 * myri10ge ones are listed in docs/driver.md). A key the driver does not know fails
	 * the open. NULL or "": none. */
	const char *driver_args;
};

/* Offload capabilities (myrio_port_info.caps). */
#define MYRIO_CAP_TX_CSUM 0x1u	       /* per-packet L4 checksum insertion, §5.5 */
#define MYRIO_CAP_RX_CSUM_PARTIAL 0x2u /* whole-frame sum in every completion, §4.6 */
#define MYRIO_CAP_TSO 0x4u	       /* TCP segmentation (§5.6) */
#define MYRIO_CAP_IRQ 0x8u	       /* interrupt eventfd for sleeping when idle */

enum myrio_link { MYRIO_LINK_DOWN = 0, MYRIO_LINK_UP = 1, MYRIO_LINK_UNKNOWN = 3 };

struct myrio_port_info {
	char device[64]; /* the device string it was opened with */
	char bus[16];	 /* "sim", "simd", "vfio", "pair" */
	char driver[16]; /* "myri10ge", "e1000e", "pair" */
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t max_frame; /* largest frame: mtu + 18 (header, VLAN tag, CRC) */
	uint32_t tx_ring_entries;
	uint32_t rx_ring_entries; /* per receive ring */
	uint32_t tx_boundary;	  /* TSO: bytes a send descriptor may read at most; 0 no TSO */
	uint32_t caps;
};

/* Counters every driver keeps. What is particular to a NIC (its firmware's drop reasons,
 * say) is in the extended stats below. */
struct myrio_port_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_bad_completion; /* completion entries with impossible lengths, dropped */
	uint64_t rx_refill_failed;  /* buffer pool empty when refilling the rings */
	uint64_t tx_ring_full;	    /* packets tx_burst could not take */
	uint64_t tx_dropped_bad;    /* packets refused: too long, too short, bad offload request */
	uint64_t link_changes;
	uint64_t rx_missed; /* frames the NIC dropped: no receive buffer, overrun */
	uint64_t rx_errors; /* frames the NIC dropped as damaged: bad CRC, runt, PHY error */
	uint32_t link_up;
	uint64_t watchdog_resets;  /* NIC resets by the driver's watchdog (reboot, stall) */
	uint64_t rx_csum_mismatch; /* buffers not holding what the NIC reported (rx_verify) */
	uint64_t tx_tso_chains;	   /* TSO requests queued, each counted once in tx_packets */
};

/* Extended statistics: every counter of the port by name, like `ethtool -S` or DPDK's
 * xstats: those of struct myrio_port_stats first, under their field names, then the
 * driver's own (the myri10ge ones are in docs/driver.md). Ask for the names once, then read
 * the values as often as needed, in the same order. */
#define MYRIO_XSTAT_NAME_LEN 48
struct myrio_xstat_name {
	char name[MYRIO_XSTAT_NAME_LEN];
};

/* Driver attributes: what a NIC says about itself beyond the generic info (firmware
 * version, serial number, buffer sizes), as text. */
struct myrio_port_attr {
	char name[32];
	char value[128];
};

void myrio_port_conf_init(struct myrio_port_conf *conf);

int myrio_port_open(struct myrio_port **out, const char *device,
		    const struct myrio_port_conf *conf);
/* After its stacks and pools are gone (see the teardown order above). */
void myrio_port_close(struct myrio_port *port);

/* Receives up to n packets; the caller owns them and frees them with myrio_pkt_free, or
 * sends them on (a forwarder's l2fwd): a received buffer may be given to the send of the
 * queue it came from (myrio_tx_burst for myrio_rx_burst's, myrio_tx_burst_queue of its
 * queue), as it is (data at the Ethernet header, len the frame's) or changed in place;
 * the send completion frees it into its receive pool. Not to another queue's: pools are
 * single-threaded, and that queue's thread would free it. */
uint16_t myrio_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);
/* Queues up to n packets for transmission and takes ownership of the ones it queued
 * (it frees them when the NIC has read them); returns how many it took. */
uint16_t myrio_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n);

/* For a received frame that failed a check of its own (a transport checksum): sums the
 * frame in software and compares with the checksum the NIC reported. p as received:
 * data at the Ethernet header, len the frame's length. Returns 1 when they agree (the frame
 * was damaged before the NIC: drop it), 0 when the NIC reported no checksum, -EIO when they
 * differ: the buffer does not hold what the NIC wrote, a misbehaving NIC whose receive
 * rings are out of step with the driver's; the port resets it (counted in watchdog_resets
 * and rx_csum_mismatch). */
int myrio_rx_verify(struct myrio_port *port, const struct myrio_pkt *p);

/* Transmit buffers: a pool whose memory the port's device can reach. buf_len is each
 * buffer's whole size, MYRIO_PKT_HEADROOM included: frames up to buf_len -
 * MYRIO_PKT_HEADROOM bytes. Destroy it before closing the port. */
int myrio_port_pool_create(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			   struct myrio_pool **out);
/* Waits until every buffer of pool is back in it (the NIC has sent and handed back all
 * that was given to myrio_tx_burst; the application holds none), reaping the port's send
 * completions, at most timeout_ms. 0, or -ETIMEDOUT with buffers still out. Call it
 * before destroying a pool whose frames were sent. */
int myrio_port_tx_drain(struct myrio_port *port, struct myrio_pool *pool, unsigned timeout_ms);

int myrio_port_link(struct myrio_port *port); /* enum myrio_link, or < 0 */
int myrio_port_info(struct myrio_port *port, struct myrio_port_info *info);
/* On a port of several queues any thread may read the stats (the queues' threads write
 * their counters meanwhile, each read whole); on a port of one queue, the thread that polls
 * it (the stats may handle the NIC's pending status update first). */
int myrio_port_stats(struct myrio_port *port, struct myrio_port_stats *stats);

/* Each returns how many items the driver has (possibly more than n) and fills the first n. */
int myrio_port_xstats_names(struct myrio_port *port, struct myrio_xstat_name *names, unsigned n);
int myrio_port_xstats(struct myrio_port *port, uint64_t *values, unsigned n);
int myrio_port_attrs(struct myrio_port *port, struct myrio_port_attr *attrs, unsigned n);
/* One extended counter by name: 0, or -ENOENT when the driver has none of that name. */
int myrio_port_xstat(struct myrio_port *port, const char *name, uint64_t *value);

/* The driver that claims a PCI function's vendor and device IDs, for tools that look at a
 * device before opening it: its name ("myri10ge", "e1000e") and the NIC it drives
 * ("Myri-10G"); -ENODEV when no driver claims them. Either pointer may be NULL. */
int myrio_port_driver_for_pci(uint16_t vendor, uint16_t device, const char **driver,
			      const char **nic);

/* Multicast reception, beside the port's own address and broadcast. The list replaces the
 * previous one (like DPDK's rte_eth_dev_set_mc_addr_list; n = 0 empties it): at most
 * MYRIO_MC_ADDR_MAX group addresses (I/G bit set, not broadcast), duplicates allowed.
 * A NIC whose filter holds fewer receives every multicast frame instead, until the list fits
 * again (xstat mc_filter_overflow; the caller filters in software anyway); a frame of a
 * group not listed may arrive, one listed always does. -EINVAL for an address that is not
 * a group, -E2BIG beyond the maximum, -ENOTSUP for a driver without multicast. */
#define MYRIO_MC_ADDR_MAX 256u
int myrio_port_mc_addr_list(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n);
/* Every multicast frame received whatever the list (on), or only the list's (off). */
int myrio_port_allmulti(struct myrio_port *port, bool on);

/* Interrupt-driven waiting, for programs that sleep when idle: the fd becomes readable
 * when the NIC raises an interrupt after myrio_port_irq_arm. -ENOTSUP without interrupts. */
int myrio_port_irq_fd(struct myrio_port *port);
int myrio_port_irq_arm(struct myrio_port *port);

/* Queues: a port of several receive/send queue pairs (the Myri-10G's slices), each for one
 * thread, as DPDK's rx/tx queues. Open it with the driver argument "queues=N" (1..16, the
 * RSS firmware: an rss_ image on a board; on the model, eeprom_fw=rss in its
 * configuration, myrio_sim_conf_parse or myrio-simd --model) or myrio_port_open_queues;
 * without it the open fails. Queue 0 is what myrio_rx_burst/myrio_tx_burst
 * and myrio_port_irq_fd serve; queue q is served by the calls below, from one thread per
 * queue, without locks: a queue's received buffers come from pools of its own, so the
 * thread that polls a queue frees what it received (and sends from pools it made). The
 * NIC spreads received flows over the queues by RSS (myrio_port_rss_*); every packet then
 * carries its hash (MYRIO_PKT_RX_RSS_HASH). Counters: the port's sum every queue, and the
 * extended stats add rx_qN_packets, rx_qN_bytes, tx_qN_packets, tx_qN_bytes per queue.
 * Published counters are every queue's, copied by queue 0's poller; capture refuses a port
 * of several queues (-ENOTSUP: one pcap writer, no lock between the queues' threads).
 * The watchdog looks at every queue's send ring from that queue's calls; when it resets
 * the NIC, every queue's calls return 0 until it is back, and the frames still in the send
 * rings are lost (xstat tx_lost_reset). */
int myrio_port_open_queues(struct myrio_port **out, const char *device,
			   const struct myrio_port_conf *conf, uint16_t queues);
int myrio_port_queues(struct myrio_port *port); /* 1 for a port without queues */
uint16_t myrio_rx_burst_queue(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
			      uint16_t n);
uint16_t myrio_tx_burst_queue(struct myrio_port *port, uint16_t queue, struct myrio_pkt **pkts,
			      uint16_t n);
/* A queue's interrupt eventfd (MSI-X, a vector per queue) and its arming, as
 * myrio_port_irq_fd/arm for queue 0; -ENOTSUP when the queues run polled. */
int myrio_port_irq_fd_queue(struct myrio_port *port, uint16_t queue);
int myrio_port_irq_arm_queue(struct myrio_port *port, uint16_t queue);
/* One queue's counters, as its thread's calls made them (the port's stats sum every
 * queue's). The NIC's own drop counters are the port's (slice 0's status block, §6.1):
 * a queue's receive drops are the buffers its refill could not find (the NIC then drops
 * for want of one) and the completions discarded as impossible. irq_updates counts the
 * queue's status-block updates: the interrupts its vector raised (also when polled). */
struct myrio_queue_stats {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_refill_failed, rx_bad_completion;
	uint64_t tx_ring_full;	 /* packets tx_burst could not take */
	uint64_t tx_dropped_bad; /* packets refused: too long, too short, bad offload request */
	uint64_t irq_updates;
};
int myrio_port_queue_stats(struct myrio_port *port, uint16_t queue,
			   struct myrio_queue_stats *stats);

/* RSS: a received flow's hash picks entry hash % table_size of the table, which names its
 * queue. The hash types are the Myri-10G firmware's (SET_RSS_ENABLE): it has no UDP
 * 4-tuple Toeplitz (DPDK's ETH_RSS_UDP). Under IPV4 | TCP_IPV4 (the default) UDP and other
 * IPv4 hash by the addresses alone: every UDP flow between two hosts lands on one queue.
 * MYRIO_RSS_PORTS is the only type that spreads UDP by ports. Non-IPv4 frames (ARP) hash
 * to 0, and so do IPv4 fragments under the port types. */
#define MYRIO_RSS_IPV4 0x1u	/* Toeplitz over the IPv4 source and destination addresses */
#define MYRIO_RSS_TCP_IPV4 0x2u /* Toeplitz over addresses and TCP ports; other frames 0 */
#define MYRIO_RSS_PORTS 0x4u	/* the NIC's port hash: TCP/UDP source XOR destination port */
#define MYRIO_RSS_KEY_LEN 40u
struct myrio_rss_conf {
	uint32_t hash;	     /* MYRIO_RSS_IPV4 and/or _TCP_IPV4, or MYRIO_RSS_PORTS alone */
	uint16_t table_size; /* entries, 1..256 */
	uint8_t table[256];  /* the queue of each entry */
	uint8_t key[MYRIO_RSS_KEY_LEN];
};
/* Default: IPv4 | TCP_IPV4, a table of 128 entries cycling over the queues, Microsoft's
 * verification key. May be set while threads poll and send on the queues: the NIC takes a
 * new table entry by entry (each frame follows the old entry or the new one, always a
 * queue of the port); a new key, hash type or table size takes effect at its own command,
 * so frames arriving during the change may land by a mixture of the two configurations.
 * The hash given to received packets is computed by the driver with the configuration in
 * force when the burst began; the call returns once no burst uses the previous one. A
 * configuration the NIC refuses returns its error and leaves the previous one in force. */
int myrio_port_rss_get(struct myrio_port *port, struct myrio_rss_conf *conf);
int myrio_port_rss_set(struct myrio_port *port, const struct myrio_rss_conf *conf);
/* The queue that receives a flow's packets: proto (6 TCP, 17 UDP), the addresses and ports
 * as a received packet carries them (source = the remote end), network byte order. Stores
 * the hash in *hash when not NULL. -ENOTSUP for a port without RSS. */
int myrio_port_rss_flow_queue(struct myrio_port *port, uint8_t proto, uint32_t saddr,
			      uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t *hash);

/* Writes every frame the port sends and receives to a pcap file until stopped or closed,
 * as on the wire: received frames as the NIC wrote them; sent frames once the driver took
 * them, with the checksums the NIC fills in and each TSO request as the segments the NIC
 * cuts. A frame the driver refuses is not written. */
int myrio_port_capture_start(struct myrio_port *port, const char *pcap_path);
void myrio_port_capture_stop(struct myrio_port *port);

#ifdef __cplusplus
}
#endif
#endif
