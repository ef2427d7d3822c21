/* SPDX-License-Identifier: BSD-3-Clause */
/* The cross build has no target builds of libhugetlbfs, libpcap and libpciaccess: these
 * stand-ins report each as unavailable, which the library handles as on a host without
 * them (ordinary memory for DMA, no capture, no PCI scan). */
#include <errno.h>
#include <stddef.h>

#include <hugetlbfs.h>
#include <pcap/pcap.h>
#include <pciaccess.h>

long gethugepagesize(void)
{
	return -1;
}
const char *hugetlbfs_find_path_for_size(long page_size)
{
	(void)page_size;
	return NULL;
}
int hugetlbfs_unlinked_fd_for_size(long page_size)
{
	(void)page_size;
	return -1;
}

pcap_t *pcap_open_dead(int linktype, int snaplen)
{
	(void)linktype;
	(void)snaplen;
	return NULL;
}
pcap_dumper_t *pcap_dump_open(pcap_t *p, const char *fname)
{
	(void)p;
	(void)fname;
	return NULL;
}
char *pcap_geterr(pcap_t *p)
{
	(void)p;
	return (char *)"libpcap is not built for this target";
}
void pcap_close(pcap_t *p)
{
	(void)p;
}
void pcap_dump(u_char *user, const struct pcap_pkthdr *h, const u_char *sp)
{
	(void)user;
	(void)h;
	(void)sp;
}
void pcap_dump_close(pcap_dumper_t *d)
{
	(void)d;
}

int pci_system_init(void)
{
	return ENOSYS;
}
void pci_system_cleanup(void)
{
}
struct pci_device_iterator *pci_id_match_iterator_create(const struct pci_id_match *match)
{
	(void)match;
	return NULL;
}
struct pci_device *pci_device_next(struct pci_device_iterator *iter)
{
	(void)iter;
	return NULL;
}
void pci_iterator_destroy(struct pci_device_iterator *iter)
{
	(void)iter;
}
