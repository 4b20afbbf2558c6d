/*-------------------------------------------------------------------------
 *
 * column_label.h
 *	  A column's choice of toaster, mirrored in a security label.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/column_label.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_COLUMN_LABEL_H
#define JSONB_TOASTER_COLUMN_LABEL_H

#ifdef JT_CUSTOM_TOAST
extern void jt_column_label_init(void);
#endif

#endif							/* JSONB_TOASTER_COLUMN_LABEL_H */
