/*-------------------------------------------------------------------------
 *
 * jsonb_toaster.c
 *	  Module entry point of jsonb_toaster.
 *
 * The library may be loaded through shared_preload_libraries (needed by the
 * toaster on patched servers) or on first use of one of its functions.
 * Either way it reserves the "jsonb_toaster." configuration prefix, so that
 * a misspelled setting is reported instead of silently creating a
 * placeholder.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb_toaster.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "admin/column_label.h"
#include "admin/uninstall.h"
#include "overrides.h"
#include "support/names.h"
#include "support/writing_statement.h"

#ifdef JT_CUSTOM_TOAST
#include "bytea/bytea_toaster.h"
#include "toaster/toaster.h"
#endif

#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "jsonb_toaster",.version = "0.3.0");
#else
PG_MODULE_MAGIC;
#endif

#if PG_VERSION_NUM < 160000
/* fmgr.h declares it from 16 on */
void		_PG_init(void);
#endif

void
_PG_init(void)
{
#ifdef JT_CUSTOM_TOAST
	jt_toaster_init();
	jt_bytea_toaster_init();
	jt_overrides_init();
	jt_uninstall_init();
	jt_column_label_init();
	jt_writing_statement_init();
#endif
	MarkGUCPrefixReserved(JSONB_TOASTER_GUC_PREFIX);
}

/*
 * jsonb_toaster_custom_toast() returns boolean
 *
 * Was this build of the library compiled against a server with the custom
 * TOAST hooks (see the Makefile)?  Only such a build can hold the toaster.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_custom_toast);
Datum
jsonb_toaster_custom_toast(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	PG_RETURN_BOOL(true);
#else
	PG_RETURN_BOOL(false);
#endif
}
