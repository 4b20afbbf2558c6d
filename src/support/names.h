/*-------------------------------------------------------------------------
 *
 * names.h
 *	  The names the extension goes by: its own, its toaster's, and its
 *	  settings' prefix.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/names.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_NAMES_H
#define JSONB_TOASTER_NAMES_H

/* The extension's name, and the name its toaster registers. */
#define JSONB_TOASTER_NAME		"jsonb_toaster"

/* Prefix of every configuration parameter of the extension. */
#define JSONB_TOASTER_GUC_PREFIX "jsonb_toaster"

#endif							/* JSONB_TOASTER_NAMES_H */
