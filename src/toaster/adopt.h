/*-------------------------------------------------------------------------
 *
 * adopt.h
 *	  The toaster's adopt callback (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/adopt.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_ADOPT_H
#define JSONB_TOASTER_ADOPT_H

#include "utils/relcache.h"

extern struct varlena *jt_adopt(Relation rel, int attnum,
								struct varlena *value,
								struct varlena *oldvalue);

#endif							/* JSONB_TOASTER_ADOPT_H */
