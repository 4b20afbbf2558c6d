/*-------------------------------------------------------------------------
 *
 * narrow.h
 *	  A document narrowed to chains of steps.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/narrow.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_NARROW_H
#define JSONB_TOASTER_NARROW_H

#include "fmgr.h"

#include "read/accessors.h"

/* bounds on what is narrowed: steps in all, chains, array index taken */
#define JT_NARROW_MAX_STEPS		256
#define JT_NARROW_MAX_CHAINS	64
#define JT_NARROW_MAX_INDEX		10000

typedef struct JtChains
{
	JtPathStep	steps[JT_NARROW_MAX_STEPS];
	int			nsteps;
	int			start[JT_NARROW_MAX_CHAINS];	/* of each chain, in steps */
	int			length[JT_NARROW_MAX_CHAINS];
	int			nchains;
	bool		exact;			/* what is read is the node the one chain
								 * reaches, and nothing else */
} JtChains;

extern void jt_chains_init(JtChains *chains);
extern bool jt_chains_begin(JtChains *chains);
extern bool jt_chains_add(JtChains *chains, const JtPathStep *step);
extern int	jt_chains_end(JtChains *chains);
/*
 * Fill chains from what a copy of a path or pattern (bytes) names, pointing
 * into the copy; false if the whole document is needed.
 */
typedef bool (*JtChainsBuilder) (const void *bytes, JtChains *chains);

extern const JtChains *jt_kept_chains(const void *bytes, Size size,
									  JtChainsBuilder build);
extern Datum jt_narrow(Datum doc, const JtChains *chains, bool *missed);
extern Datum jt_call_on_narrowed(FunctionCallInfo fcinfo, PGFunction builtin,
								 int arg, Datum narrowed);

#endif							/* JSONB_TOASTER_NARROW_H */
