/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The toaster's settings: how large a skeleton a row keeps, and the
 *	  size of the ranges wide containers are cut into.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SETTINGS_H
#define JSONB_TOASTER_SETTINGS_H

#include "utils/relcache.h"

extern PGDLLIMPORT int jt_inline_budget;
extern PGDLLIMPORT int jt_range_size;
extern PGDLLIMPORT int jt_unit_size;
extern PGDLLIMPORT int jt_format_version;

extern void jt_toaster_settings_init(void);
extern bool jt_column_budget_option(Relation rel, int attnum, int32 *budget);
extern int32 jt_column_inline_budget(Relation rel, int attnum);
extern uint32 jt_whole_container_size(uint32 version);
extern void jt_validate_options(const char *options);

#endif							/* JSONB_TOASTER_SETTINGS_H */
