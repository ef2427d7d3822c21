/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "link_pair.h"

static int open_sim(struct link_pair *l, const char *spec, const struct myrio_port_conf *pc)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	int rc = *spec ? myrio_sim_conf_parse(&sc, spec) : 0;
	if (rc < 0)
		return rc;
	sc.stepped = true;
	if ((rc = myrio_sim_create(&l->sim, &sc)) < 0)
		return rc;
	struct myrio_port_conf c;
	if (pc)
		c = *pc;
	else
		myrio_port_conf_init(&c);
	c.sim = l->sim;
	if ((rc = myrio_port_open(&l->a, "sim:sim0", &c)) < 0)
		return rc;
	return myrio_port_open(&l->b, "sim:sim1", &c);
}

/* "A+B[@SOCKET]": simd:A[@SOCKET] and simd:B[@SOCKET]. */
static int open_simd(struct link_pair *l, const char *names, const struct myrio_port_conf *pc)
{
	const char *plus = strchr(names, '+'), *at = strchr(names, '@');
	if (!plus || (at && at < plus))
		return -EINVAL;
	char dev[160];
	if ((size_t)snprintf(dev, sizeof(dev), "simd:%.*s%s", (int)(plus - names), names,
			     at ? at : "") >= sizeof(dev))
		return -EINVAL;
	int rc = myrio_port_open(&l->a, dev, pc);
	if (rc < 0)
		return rc;
	int blen = at ? (int)(at - plus - 1) : (int)strlen(plus + 1);
	if ((size_t)snprintf(dev, sizeof(dev), "simd:%.*s%s", blen, plus + 1, at ? at : "") >=
	    sizeof(dev))
		return -EINVAL;
	return myrio_port_open(&l->b, dev, pc);
}

static int open_pair(struct link_pair *l, const char *name, const char *opts_a, const char *opts_b)
{
	char dev[160];
	snprintf(dev, sizeof(dev), "pair:%s/0%s", name, opts_a ? opts_a : "");
	int rc = myrio_port_open(&l->a, dev, NULL);
	if (rc < 0)
		return rc;
	snprintf(dev, sizeof(dev), "pair:%s/1%s", name, opts_b ? opts_b : "");
	return myrio_port_open(&l->b, dev, NULL);
}

int link_pair_open(struct link_pair *l, const char *link, const char *opts_a, const char *opts_b,
		   const struct myrio_port_conf *pc)
{
	memset(l, 0, sizeof(*l));
	int rc = -EINVAL;
	if (strncmp(link, "sim:", 4) == 0)
		rc = open_sim(l, link + 4, pc);
	else if (strncmp(link, "simd:", 5) == 0)
		rc = open_simd(l, link + 5, pc);
	else if (strncmp(link, "pair:", 5) == 0)
		rc = open_pair(l, link + 5, opts_a, opts_b);
	if (rc < 0)
		link_pair_close(l);
	return rc;
}

void link_pair_step(struct link_pair *l, unsigned n)
{
	if (l->sim)
		myrio_sim_step(l->sim, n);
}

void link_pair_close(struct link_pair *l)
{
	myrio_port_close(l->a);
	myrio_port_close(l->b);
	myrio_sim_destroy(l->sim);
	memset(l, 0, sizeof(*l));
}
