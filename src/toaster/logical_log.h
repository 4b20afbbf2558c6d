/*-------------------------------------------------------------------------
 *
 * logical_log.h
 *	  What logical decoding needs of the parts a new value shares with
 *	  older row versions, logged with the value (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/logical_log.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_LOGICAL_LOG_H
#define JSONB_TOASTER_LOGICAL_LOG_H

#include "utils/relcache.h"
#include "varatt.h"

/*
 * The WAL resource manager id of the toaster's records.  Custom resource
 * managers share the ids 128..255 between every extension of a server;
 * this one is to be registered on the PostgreSQL wiki's list before a
 * release.
 */
#define JT_RMGR_ID				187
#define JT_RMGR_NAME			"jsonb_toaster"

extern void jt_logical_log_init(void);
extern void jt_log_shared_values(Relation rel, struct varlena *pointer,
								 struct varlena *oldvalue);

#endif							/* JSONB_TOASTER_LOGICAL_LOG_H */
