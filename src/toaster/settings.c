/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The toaster's settings (patched servers only).
 *
 * Two settings: jsonb_toaster.inline_budget and jsonb_toaster.range_size.
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

#include "access/toast_custom.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "support/names.h"
#include "toaster/settings.h"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		2048
#define JT_MAX_SETTING				(MaxAllocSize / 2)

int			jt_inline_budget = JT_DEFAULT_INLINE_BUDGET;
int			jt_range_size = JT_DEFAULT_RANGE_SIZE;

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
}

/*
 * Parse a column's toaster_options, "key=value[, key=value ...]", into
 * *inline_budget (left alone if not given); with complain, raise an ERROR
 * for what is not valid, else ignore it.
 */
static void
parse_options(const char *options, int32 *inline_budget, bool complain)
{
	char	   *copy = pstrdup(options);
	char	   *item;
	char	   *save = NULL;

	for (item = strtok_r(copy, ",", &save); item != NULL;
		 item = strtok_r(NULL, ",", &save))
	{
		char	   *eq = strchr(item, '=');
		char	   *key = item;
		char	   *value;
		char	   *end;
		long		n;

		if (eq == NULL)
		{
			if (complain)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid jsonb_toaster option \"%s\"", item),
						 errhint("Options are written key=value, separated by commas.")));
			continue;
		}
		*eq = '\0';
		value = eq + 1;
		while (*key == ' ')
			key++;
		for (char *t = eq - 1; t >= key && *t == ' '; t--)
			*t = '\0';
		while (*value == ' ')
			value++;
		if (strcmp(key, "inline_budget") != 0)
		{
			if (complain)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unrecognized jsonb_toaster option \"%s\"", key),
						 errhint("The option jsonb_toaster takes is inline_budget.")));
			continue;
		}
		errno = 0;
		n = strtol(value, &end, 10);
		while (*end == ' ')
			end++;
		if (end == value || *end != '\0' || errno != 0 || n < 0 ||
			n > JT_MAX_SETTING)
		{
			if (complain)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for jsonb_toaster option \"inline_budget\": \"%s\"",
								value),
						 errdetail("Valid values are whole numbers of bytes from 0 to %d.",
								   (int) JT_MAX_SETTING)));
			continue;
		}
		*inline_budget = (int32) n;
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
