/*-------------------------------------------------------------------------
 *
 * jsonb_toaster.h
 *	  Declarations shared by the jsonb_toaster source files.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb_toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_H
#define JSONB_TOASTER_H

/* The extension's name, and the name its toaster registers. */
#define JSONB_TOASTER_NAME		"jsonb_toaster"

/* Prefix of every configuration parameter of the extension. */
#define JSONB_TOASTER_GUC_PREFIX "jsonb_toaster"

#endif							/* JSONB_TOASTER_H */
