/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The toaster's settings (patched servers only).
 *
 * The settings: jsonb_toaster.inline_budget, range_size, unit_size and
 * format_version.
 * A column may set its own inline budget in its toaster_options, which
 * takes precedence over the setting for the values of that column:
 *
 *	ALTER TABLE docs ALTER COLUMN jb
 *		SET (toaster = 'jsonb_toaster', toaster_options = 'inline_budget=200');
 *
 * It trades reads of short fields, answered from the row, against the
 * size of the row, which every UPDATE of any column writes again and every
 * scan reads.
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/toast_custom.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "format/format.h"
#include "support/names.h"
#include "toaster/settings.h"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		2048
#define JT_DEFAULT_UNIT_SIZE		16384
#define JT_MAX_SETTING				(MaxAllocSize / 2)

int			jt_inline_budget = JT_DEFAULT_INLINE_BUDGET;
int			jt_range_size = JT_DEFAULT_RANGE_SIZE;
int			jt_unit_size = JT_DEFAULT_UNIT_SIZE;
int			jt_format_version = JT_SKELETON_VERSION_LATEST;

void
jt_toaster_settings_init(void)
{
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".inline_budget",
							"Largest skeleton the jsonb toaster keeps in a heap row.",
							"The longest values of a document leave the row until "
							"the rest fits in this many bytes, or in the room "
							"TOAST leaves the column if that is less.",
							&jt_inline_budget, JT_DEFAULT_INLINE_BUDGET,
							0, JT_MAX_SETTING, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".range_size",
							"Size of the ranges wide arrays and objects are split into.",
							"A container larger than this that leaves the row is "
							"stored as several parts of about this size.",
							&jt_range_size, JT_DEFAULT_RANGE_SIZE,
							64, JT_MAX_SETTING, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".unit_size",
							"Raw size up to which parts written together are compressed as one.",
							"Consecutive parts of a document compressed as one "
							"stream find the repetitions that parts compressed "
							"one by one miss; reading one decodes its unit up to "
							"its end.  0 compresses every part on its own.",
							&jt_unit_size, JT_DEFAULT_UNIT_SIZE,
							0, JT_UNIT_MAX_RAW, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".format_version",
							"Format version of the values the jsonb toaster writes.",
							"Version 5 is what releases before compression units "
							"read, version 4 what releases before packed parts "
							"read: every part its own TOAST value.  Values of every "
							"version are read.",
							&jt_format_version, JT_SKELETON_VERSION_LATEST,
							JT_SKELETON_VERSION_CRC32C, JT_SKELETON_VERSION_LATEST,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

/* s without the white space around it, in place */
static char *
trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

/*
 * One item of a column's toaster_options, "key=value", into
 * *inline_budget (*seen tells a key given before); with complain, raise an
 * ERROR for what is not valid, else ignore it.
 */
static void
parse_item(char *item, int32 *inline_budget, bool *seen, bool complain)
{
	char	   *eq = strchr(item, '=');
	char	   *key;
	char	   *value;
	char	   *end;
	long		n;

	if (eq == NULL)
	{
		if (complain)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid jsonb_toaster option \"%s\"", trim(item)),
					 errhint("Options are written key=value, separated by commas.")));
		return;
	}
	*eq = '\0';
	key = trim(item);
	value = trim(eq + 1);
	if (strcmp(key, "inline_budget") != 0)
	{
		if (complain)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unrecognized jsonb_toaster option \"%s\"", key),
					 errhint("The option jsonb_toaster takes is inline_budget.")));
		return;
	}
	if (*seen && complain)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("jsonb_toaster option \"%s\" given more than once", key)));
	errno = 0;
	n = strtol(value, &end, 10);
	if (!isdigit((unsigned char) *value) || *end != '\0' || errno != 0 ||
		n > JT_MAX_SETTING)
	{
		if (complain)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for jsonb_toaster option \"inline_budget\": \"%s\"",
							value),
					 errdetail("Valid values are whole numbers of bytes from 0 to %d.",
							   (int) JT_MAX_SETTING)));
		return;
	}
	*inline_budget = (int32) n;
	*seen = true;
}

/*
 * Parse a column's toaster_options, "key=value[, key=value ...]", into
 * *inline_budget (left alone if not given); with complain, raise an ERROR
 * for what is not valid (an empty item, a key given twice, an unknown key,
 * a value that is not a whole number of bytes in range), else ignore it.
 */
static void
parse_options(const char *options, int32 *inline_budget, bool complain)
{
	char	   *copy = pstrdup(options);
	char	   *item = copy;
	bool		seen = false;

	for (;;)
	{
		char	   *comma = strchr(item, ',');

		if (comma)
			*comma = '\0';
		parse_item(item, inline_budget, &seen, complain);
		if (comma == NULL)
			break;
		item = comma + 1;
	}
	pfree(copy);
}

/* The toaster's validate_options callback */
void
jt_validate_options(const char *options)
{
	int32		inline_budget;

	parse_options(options, &inline_budget, true);
}

/*
 * Does the column set its own inline budget (inline_budget in its
 * toaster_options)?  If so, *budget is it.
 */
bool
jt_column_budget_option(Relation rel, int attnum, int32 *budget)
{
	char	   *options = GetCustomToasterOptions(rel, attnum);
	int32		found = -1;

	if (options != NULL)
	{
		parse_options(options, &found, false);
		pfree(options);
	}
	if (found < 0)
		return false;
	*budget = found;
	return true;
}

/*
 * The inline budget of a column: its own, or else
 * jsonb_toaster.inline_budget.
 */
int32
jt_column_inline_budget(Relation rel, int attnum)
{
	int32		budget;

	if (jt_column_budget_option(rel, attnum, &budget))
		return budget;
	return Max(jt_inline_budget, 0);
}

/*
 * How long a container may be and still be kept as one range, in a value
 * of format version version: a compression unit's raw size, when the
 * version has units (a reader of one range would decode the unit up to it
 * anyway).  Bounded by a number of ranges, so that a smaller range_size
 * still cuts smaller containers.
 */
#define JT_WHOLE_MAX_RANGES		8

uint32
jt_whole_container_size(uint32 version)
{
	if (!jt_version_has_units(version) || jt_unit_size <= 0)
		return 0;
	return (uint32) Min((uint64) jt_unit_size,
						(uint64) jt_range_size * JT_WHOLE_MAX_RANGES);
}
