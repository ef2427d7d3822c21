/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QEMU glue for libmyrio's Myri-10G device model (src/sim): `-device myri10ge-model`.
 * The model is the device; this file only connects it to QEMU: BAR0 stores into the
 * model's SRAM, config space both ways, DMA through the device's PCI address space (so a
 * vIOMMU translates and blocks), QEMU's virtual clock, MSI and INTx, and the firmware loop
 * run from a bottom half, a timer and command stores (docs/device-model.md, "Hosted in
 * QEMU"). Devices with the same `cable` are the two ends of one model cable; a device
 * with `netdev` has its cable's other end on that QEMU netdev (a TAP to the host, ...).
 */
#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "exec/memory.h"
#include "net/net.h"
#include "sysemu/dma.h"

#include "sim/endpoint.h"
#include "sim/host.h"
#include "sim/model.h"

#define TYPE_MYRI10GE_MODEL "myri10ge-model"
OBJECT_DECLARE_SIMPLE_TYPE(MyriModelState, MYRI10GE_MODEL)

/* Polling cadence of the firmware loop: busy while it has work, slower when idle. */
#define BUSY_POLL_NS 20000
#define IDLE_POLL_NS 250000

/* Frames from the netdev waiting for the model's next run; beyond that, QEMU queues. */
#define NET_QUEUE 64
/* A longer frame from the netdev is dropped (no NIC receives one; the TAP endpoint reads
 * no more either). */
#define NET_FRAME_MAX 65536

typedef struct MyriCable MyriCable;

struct MyriModelState {
    PCIDevice parent_obj;
    MemoryRegion bar0;
    MemoryRegion msix_bar; /* the MSI-X table and PBA, where the model's capability says */
    unsigned vectors;      /* MSI-X vectors the model signals: one per slice */
    char *cable_id;
    char *model_conf;
    MyriCable *cable;
    struct sim_nic *nic;
    uint8_t *sram;
    uint8_t vs_cap, vs_len; /* the vendor capability: read from the model */
    uint64_t dma_faults;    /* last reported */
    /* the cable's other end on a netdev */
    NICConf conf;
    NICState *net;
    struct sim_endpoint ep;
    struct {
        uint8_t *buf;
        size_t len;
    } netq[NET_QUEUE];
    unsigned net_head, net_tail;
};

/* One model world per cable: two NICs joined, driven by one timer and one bottom half. */
struct MyriCable {
    char *id;
    struct myrio_sim *world;
    MyriModelState *ends[2];
    QEMUTimer *timer;
    QEMUBH *bh;
    QLIST_ENTRY(MyriCable) link;
};
static QLIST_HEAD(, MyriCable) cables = QLIST_HEAD_INITIALIZER(cables);

static void cable_run(MyriCable *c)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned work = sim_world_run_at(c->world, now);
    for (int i = 0; i < 2; i++) {
        MyriModelState *s = c->ends[i];
        if (!s) {
            continue;
        }
        PCIDevice *pd = PCI_DEVICE(s);
        uint64_t n;
        if (msix_enabled(pd)) { /* slice v signals vector v; vector 0 is the MSI eventfd */
            for (unsigned v = 0; v < s->vectors; v++) {
                if (read(sim_nic_vector_fd(s->nic, v), &n, sizeof(n)) == sizeof(n)) {
                    msix_notify(pd, v);
                }
            }
        } else if (read(sim_nic_irq_fd(s->nic), &n, sizeof(n)) == sizeof(n) &&
                   msi_enabled(pd)) {
            msi_notify(pd, 0);
        }
        pci_set_irq(pd, sim_nic_intx_line(s->nic));
        uint64_t f = sim_nic_dma_faults(s->nic);
        if (f != s->dma_faults) { /* the tests read the count here */
            s->dma_faults = f;
            fprintf(stderr, "myri10ge-model %02x:%02x.%x: %" PRIu64 " failed DMA\n",
                    pci_dev_bus_num(pd), PCI_SLOT(pd->devfn), PCI_FUNC(pd->devfn), f);
        }
    }
    timer_mod(c->timer, now + (work ? BUSY_POLL_NS : IDLE_POLL_NS));
}

static void cable_tick(void *opaque)
{
    cable_run(opaque);
}

static MyriModelState *ep_state(struct sim_endpoint *ep)
{
    return container_of(ep, MyriModelState, ep);
}

static void ep_deliver(struct sim_endpoint *ep, const uint8_t *frame, uint32_t len)
{
    qemu_send_packet(qemu_get_queue(ep_state(ep)->net), frame, len);
    ep->tx_frames++;
}

static unsigned ep_poll(struct sim_endpoint *ep, sim_emit_fn emit, void *ctx, unsigned max)
{
    MyriModelState *s = ep_state(ep);
    unsigned n = 0;
    while (n < max && s->net_tail != s->net_head) {
        unsigned i = s->net_tail++ % NET_QUEUE;
        emit(ctx, s->netq[i].buf, s->netq[i].len);
        g_free(s->netq[i].buf);
        n++;
    }
    ep->rx_frames += n;
    if (n) {
        qemu_flush_queued_packets(qemu_get_queue(s->net)); /* room again */
    }
    return n;
}

static const struct sim_endpoint_ops ep_ops = {.deliver = ep_deliver, .poll = ep_poll};

static bool net_can_receive(NetClientState *nc)
{
    MyriModelState *s = qemu_get_nic_opaque(nc);
    return s->net_head - s->net_tail < NET_QUEUE;
}

static ssize_t net_receive(NetClientState *nc, const uint8_t *buf, size_t size)
{
    MyriModelState *s = qemu_get_nic_opaque(nc);
    if (!net_can_receive(nc)) {
        return 0; /* QEMU keeps it until qemu_flush_queued_packets */
    }
    if (size > NET_FRAME_MAX) {
        s->ep.drops++;
        return size;
    }
    unsigned i = s->net_head++ % NET_QUEUE;
    s->netq[i].buf = g_memdup2(buf, size);
    s->netq[i].len = size;
    qemu_bh_schedule(s->cable->bh);
    return size;
}

static NetClientInfo net_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = net_can_receive,
    .receive = net_receive,
};

static uint8_t *dma_map_dir(PCIDevice *pd, uint64_t iova, uint32_t len, DMADirection dir)
{
    dma_addr_t plen = len;
    ram_addr_t off;
    void *p = pci_dma_map(pd, iova, &plen, dir);
    if (!p) {
        return NULL;
    }
    /* Guest RAM stays where it is; a bounce buffer (MMIO) does not. QEMU's map already
     * joins IOMMU pages that are adjacent in RAM: a shorter piece means they are not. */
    bool ram = plen == len && memory_region_from_host(p, &off);
    pci_dma_unmap(pd, p, plen, dir, ram && dir == DMA_DIRECTION_FROM_DEVICE ? plen : 0);
    return ram ? p : NULL;
}

static uint8_t *dma_map(void *opaque, uint64_t iova, uint32_t len, bool write)
{
    return dma_map_dir(PCI_DEVICE(opaque), iova, len,
                       write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE);
}

static uint64_t bar0_read(void *opaque, hwaddr addr, unsigned size)
{
    MyriModelState *s = opaque;
    uint64_t v = 0;
    memcpy(&v, s->sram + addr, size); /* little-endian host, as the guest's bytes */
    return v;
}

static void bar0_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    MyriModelState *s = opaque;
    memcpy(s->sram + addr, &val, size);
    if (sim_bar0_store_is_urgent((uint32_t)addr)) {
        cable_run(s->cable); /* a command: answered before the driver starts waiting */
    } else {
        qemu_bh_schedule(s->cable->bh);
    }
}

static const MemoryRegionOps bar0_ops = {
    .read = bar0_read,
    .write = bar0_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {.min_access_size = 1, .max_access_size = 8},
    .impl = {.min_access_size = 1, .max_access_size = 8},
};

static uint32_t cfg_read(PCIDevice *pd, uint32_t addr, int len)
{
    MyriModelState *s = MYRI10GE_MODEL(pd);
    uint32_t v;
    if (addr >= s->vs_cap && addr < s->vs_cap + s->vs_len &&
        sim_nic_cfg_read(s->nic, addr, len, &v) == 0) {
        return v;
    }
    return pci_default_read_config(pd, addr, len);
}

static void cfg_write(PCIDevice *pd, uint32_t addr, uint32_t val, int len)
{
    MyriModelState *s = MYRI10GE_MODEL(pd);
    pci_default_write_config(pd, addr, val, len);
    if (addr < 256) {
        sim_nic_cfg_write(s->nic, addr, len, val); /* bus master, MSI, INTx off, MRRS */
    }
    qemu_bh_schedule(s->cable->bh);
}

static uint32_t model_cfg(MyriModelState *s, unsigned off, unsigned size)
{
    uint32_t v = 0;
    sim_nic_cfg_read(s->nic, off, size, &v);
    return v;
}

/* MSI-X as the model's capability describes it: table and PBA in one BAR of QEMU's (the
 * model has no memory behind them), a vector per slice the model can signal. */
static bool add_msix(MyriModelState *s, uint8_t off, Error **errp)
{
    PCIDevice *pd = PCI_DEVICE(s);
    unsigned n = (model_cfg(s, off + PCI_MSIX_FLAGS, 2) & PCI_MSIX_FLAGS_QSIZE) + 1;
    uint32_t table = model_cfg(s, off + PCI_MSIX_TABLE, 4);
    uint32_t pba = model_cfg(s, off + PCI_MSIX_PBA, 4);
    uint8_t bar = table & PCI_MSIX_FLAGS_BIRMASK;
    uint32_t end = MAX((table & ~PCI_MSIX_FLAGS_BIRMASK) + n * PCI_MSIX_ENTRY_SIZE,
                       (pba & ~PCI_MSIX_FLAGS_BIRMASK) + QEMU_ALIGN_UP(n, 64) / 8);
    if ((pba & PCI_MSIX_FLAGS_BIRMASK) != bar || bar == 0) {
        error_setg(errp, "myri10ge-model: MSI-X table and PBA must share a BAR other than 0");
        return false;
    }
    memory_region_init(&s->msix_bar, OBJECT(s), "myri10ge-model-msix",
                       pow2ceil(MAX(end, 4096)));
    if (msix_init(pd, n, &s->msix_bar, bar, table & ~PCI_MSIX_FLAGS_BIRMASK, &s->msix_bar,
                  bar, pba & ~PCI_MSIX_FLAGS_BIRMASK, off, errp) < 0) {
        return false;
    }
    pci_register_bar(pd, bar, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->msix_bar);
    while (s->vectors < n && sim_nic_vector_fd(s->nic, s->vectors) >= 0) {
        msix_vector_use(pd, s->vectors++);
    }
    return true;
}

/* QEMU's copy of config space is the model's: header, and each capability. */
static bool copy_config(MyriModelState *s, Error **errp)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint8_t *c = pd->config;
    uint8_t caps[16], n = 0;
    pci_set_word(c + PCI_VENDOR_ID, model_cfg(s, PCI_VENDOR_ID, 2));
    pci_set_word(c + PCI_DEVICE_ID, model_cfg(s, PCI_DEVICE_ID, 2));
    pci_set_long(c + PCI_CLASS_REVISION, model_cfg(s, PCI_CLASS_REVISION, 4));
    pci_set_long(c + PCI_SUBSYSTEM_VENDOR_ID, model_cfg(s, PCI_SUBSYSTEM_VENDOR_ID, 4));
    c[PCI_INTERRUPT_PIN] = model_cfg(s, PCI_INTERRUPT_PIN, 1);
    for (uint8_t off = model_cfg(s, PCI_CAPABILITY_LIST, 1); off && n < 16;
         off = model_cfg(s, off + PCI_CAP_LIST_NEXT, 1)) {
        caps[n++] = off;
    }
    /* pci_add_capability links each new one first: add them in reverse */
    while (n--) {
        uint8_t off = caps[n], id = model_cfg(s, off, 1), size;
        switch (id) {
        case PCI_CAP_ID_MSI:
            if (msi_init(pd, off, 1, true, false, errp) < 0) {
                return false;
            }
            continue;
        case PCI_CAP_ID_MSIX:
            if (!add_msix(s, off, errp)) {
                return false;
            }
            continue;
        case PCI_CAP_ID_PM:
            size = PCI_PM_SIZEOF;
            break;
        case PCI_CAP_ID_EXP:
            size = PCI_CAP_EXP_ENDPOINT_SIZEOF_V1;
            break;
        case PCI_CAP_ID_VNDR:
            size = s->vs_len = model_cfg(s, off + 2, 1);
            s->vs_cap = off;
            break;
        default:
            continue;
        }
        if (pci_add_capability(pd, id, off, size, errp) < 0) {
            return false;
        }
        for (unsigned i = 2; i < size; i++) {
            c[off + i] = model_cfg(s, off + i, 1);
        }
        if (id == PCI_CAP_ID_EXP) { /* the driver sets the read-request size */
            pci_set_word(pd->wmask + off + PCI_EXP_DEVCTL, 0x7fff);
            pci_set_word(pd->wmask + off + PCI_EXP_LNKCTL, 0x00ff);
        }
        if (id == PCI_CAP_ID_PM) {
            pci_set_word(pd->wmask + off + PCI_PM_CTRL, PCI_PM_CTRL_STATE_MASK);
        }
    }
    return true;
}

static MyriCable *cable_get(const char *id, const char *conf_spec, unsigned nics, Error **errp)
{
    MyriCable *c;
    QLIST_FOREACH(c, &cables, link) {
        if (!strcmp(c->id, id)) {
            return c;
        }
    }
    struct myrio_sim_conf conf;
    myrio_sim_conf_init(&conf);
    if (conf_spec && myrio_sim_conf_parse(&conf, conf_spec) < 0) {
        error_setg(errp, "myri10ge-model: bad model= \"%s\"", conf_spec);
        return NULL;
    }
    conf.nics = nics;
    conf.stepped = true; /* the host runs it: sim_world_run_at */
    c = g_new0(MyriCable, 1);
    if (myrio_sim_create(&c->world, &conf) < 0) {
        error_setg(errp, "myri10ge-model: the model could not be created");
        g_free(c);
        return NULL;
    }
    c->id = g_strdup(id);
    c->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, cable_tick, c);
    c->bh = qemu_bh_new(cable_tick, c);
    QLIST_INSERT_HEAD(&cables, c, link);
    return c;
}

static void myri_realize(PCIDevice *pd, Error **errp)
{
    MyriModelState *s = MYRI10GE_MODEL(pd);
    bool netdev = s->conf.peers.ncs[0] != NULL;
    if (netdev && s->cable_id) {
        error_setg(errp, "myri10ge-model: give either cable or netdev, not both");
        return;
    }
    /* on a netdev: a world of its own, one NIC, whose cable ends at the netdev */
    g_autofree char *own = g_strdup_printf("netdev:%d", pd->devfn);
    MyriCable *c = cable_get(netdev ? own : s->cable_id ? s->cable_id : "0", s->model_conf,
                             netdev ? 1 : 2, errp);
    if (!c) {
        return;
    }
    int end = c->ends[0] ? 1 : 0;
    if (c->ends[end]) {
        error_setg(errp, "myri10ge-model: cable \"%s\" has both ends plugged", c->id);
        return;
    }
    s->nic = sim_world_nic(c->world, end);
    if (sim_nic_attach(s->nic) < 0) {
        error_setg(errp, "myri10ge-model: cannot attach to the model NIC");
        return;
    }
    s->sram = (uint8_t *)sim_nic_bar0(s->nic);
    if (!copy_config(s, errp)) {
        sim_nic_detach(s->nic);
        return;
    }
    struct sim_host_dma dma = {.map = dma_map, .opaque = s};
    sim_nic_set_host_dma(s->nic, &dma);
    memory_region_init_io(&s->bar0, OBJECT(s), &bar0_ops, s, "myri10ge-model-bar0",
                          sim_nic_bar0_len(s->nic));
    pci_register_bar(pd, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64 |
                                PCI_BASE_ADDRESS_MEM_PREFETCH,
                     &s->bar0);
    pd->config_read = cfg_read;
    pd->config_write = cfg_write;
    s->cable = c;
    c->ends[end] = s;
    if (netdev) {
        /* Debian's 7.2 has the reentrancy guard argument of 8.0 */
        s->net = qemu_new_nic(&net_info, &s->conf, object_get_typename(OBJECT(s)),
                              DEVICE(s)->id, &DEVICE(s)->mem_reentrancy_guard, s);
        s->ep.ops = &ep_ops;
        snprintf(s->ep.name, sizeof(s->ep.name), "netdev");
        if (sim_world_cable_endpoint(s->nic, &s->ep) < 0) {
            error_setg(errp, "myri10ge-model: cannot join the cable to the netdev");
            return;
        }
    }
    timer_mod(c->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + IDLE_POLL_NS);
}

static void myri_exit(PCIDevice *pd)
{
    MyriModelState *s = MYRI10GE_MODEL(pd);
    if (!s->cable) {
        return;
    }
    sim_nic_set_host_dma(s->nic, NULL);
    sim_nic_detach(s->nic);
    msi_uninit(pd);
    msix_uninit(pd, &s->msix_bar, &s->msix_bar);
    if (s->net) {
        qemu_del_nic(s->net);
        while (s->net_tail != s->net_head) {
            g_free(s->netq[s->net_tail++ % NET_QUEUE].buf);
        }
    }
    s->cable->ends[s->cable->ends[1] == s] = NULL;
}

/* A reset (system reset, a guest reboot, FLR) puts the NIC at power-on: config space, SRAM
 * and firmware, as the model's own FLR does; QEMU resets its copy of config space itself.
 * Without it the model would keep DMAing to the previous kernel's buffers once the next one
 * sets Bus Master. */
static void myri_reset(DeviceState *dev)
{
    MyriModelState *s = MYRI10GE_MODEL(dev);
    uint64_t n;
    if (!s->cable) {
        return;
    }
    sim_nic_flr(s->nic);
    while (read(sim_nic_irq_fd(s->nic), &n, sizeof(n)) == sizeof(n)) {
        continue; /* interrupts raised before the reset are gone with it */
    }
    pci_set_irq(PCI_DEVICE(s), 0);
}

/* The model's state (SRAM, firmware, rings) is not serialised: refuse migration rather than
 * arrive as a blank device under a driver that believes it is up. */
static const VMStateDescription myri_vmstate = {
    .name = TYPE_MYRI10GE_MODEL,
    .unmigratable = 1,
};

static Property myri_properties[] = {
    DEFINE_PROP_STRING("cable", MyriModelState, cable_id),
    DEFINE_PROP_STRING("model", MyriModelState, model_conf),
    DEFINE_NIC_PROPERTIES(MyriModelState, conf),
    DEFINE_PROP_END_OF_LIST(),
};

static void myri_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    k->realize = myri_realize;
    k->exit = myri_exit;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    dc->desc = "Myricom Myri-10G (libmyrio device model)";
    dc->reset = myri_reset;
    dc->vmsd = &myri_vmstate;
    device_class_set_props(dc, myri_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo myri_info = {
    .name = TYPE_MYRI10GE_MODEL,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(MyriModelState),
    .class_init = myri_class_init,
    .interfaces = (InterfaceInfo[]){{INTERFACE_CONVENTIONAL_PCI_DEVICE}, {}},
};

static void myri_register_types(void)
{
    type_register_static(&myri_info);
}

type_init(myri_register_types)
