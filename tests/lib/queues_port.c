/* SPDX-License-Identifier: BSD-3-Clause */
#include "queues_port.h"

int queues_port_open(struct myrio_sim **w, struct myrio_port **p, uint16_t nq)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	int rc = myrio_sim_conf_parse(&sc, "eeprom_fw=rss,link=unlimited");
	if (rc < 0 || (rc = myrio_sim_create(w, &sc)) < 0)
		return rc;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = *w;
	rc = myrio_port_open_queues(p, "sim:sim0", &pc, nq);
	if (rc < 0)
		myrio_sim_destroy(*w);
	return rc;
}

void queues_port_close(struct myrio_sim *w, struct myrio_port *p)
{
	myrio_port_close(p);
	myrio_sim_destroy(w);
}
