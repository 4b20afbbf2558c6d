/*-------------------------------------------------------------------------
 *
 * column_label.c
 *	  A column's choice of toaster, mirrored in a security label that tools
 *	  copying a table's definition carry along.
 *
 * A column opts in through its attribute options (toaster, toaster_options),
 * which some tools that recreate a table elsewhere leave out: Citus creates
 * the shards of a distributed table, and moves and splits them, from the
 * table's definition, its storage settings, grants, policies and security
 * labels, but not its attribute options.  So the library registers a
 * security label provider named after it, and keeps the two in step:
 *
 * - SECURITY LABEL FOR jsonb_toaster ON COLUMN t.c IS 'name' sets the
 *   column's toaster option to name (IS 'name (options)' also its
 *   toaster_options; IS NULL resets both), and
 * - ALTER TABLE .. ALTER COLUMN .. SET or RESET of either option sets or
 *   removes the label to match.
 *
 * A copy of the table that keeps the label (a shard, a dump restored) then
 * opts in by itself.  The label is a mirror: the attribute options are what
 * the server follows.  Like ALTER TABLE, labelling needs ownership of the
 * table.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/column_label.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef JT_CUSTOM_TOAST

#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/event_trigger.h"
#include "commands/seclabel.h"
#include "commands/tablecmds.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "storage/lockdefs.h"
#include "tcop/utility.h"
#include "utils/attoptcache.h"
#include "utils/lsyscache.h"

#include "admin/column_label.h"
#include "support/names.h"

static ProcessUtility_hook_type prev_process_utility = NULL;

/*
 * The label that mirrors a column's options, or NULL when the column names
 * no toaster.
 */
static char *
label_of_column(Oid relid, AttrNumber attnum)
{
	AttributeOpts *opts = get_attribute_options(relid, attnum);
	StringInfoData label;

	if (opts == NULL || opts->toaster_offset == 0)
		return NULL;
	initStringInfo(&label);
	appendStringInfoString(&label, (const char *) opts + opts->toaster_offset);
	if (opts->toaster_options_offset != 0)
		appendStringInfo(&label, " (%s)",
						 (const char *) opts + opts->toaster_options_offset);
	return label.data;
}

/* Are two labels (NULL: none) the same? */
static bool
same_label(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/*
 * Split a label into the toaster's name and its options (NULL when the
 * label gives none).
 */
static void
parse_label(const char *label, char **toaster, char **options)
{
	const char *open = strchr(label, '(');
	size_t		len = strlen(label);

	*options = NULL;
	if (open == NULL)
	{
		*toaster = pstrdup(label);
		return;
	}
	if (len == 0 || label[len - 1] != ')')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid security label \"%s\" for provider \"%s\"",
						label, JSONB_TOASTER_NAME),
				 errhint("A label is a toaster's name, optionally followed by its options in parentheses, as in '%s (inline_budget=200)'.",
						 JSONB_TOASTER_NAME)));
	*toaster = pnstrdup(label, open - label);
	*options = pnstrdup(open + 1, label + len - 1 - (open + 1));
	/* "name (opts)": the blank before the parenthesis is not the name's */
	while (**toaster != '\0' && (*toaster)[strlen(*toaster) - 1] == ' ')
		(*toaster)[strlen(*toaster) - 1] = '\0';
}

static AlterTableCmd *
options_command(AlterTableType subtype, const char *column, List *options)
{
	AlterTableCmd *cmd = makeNode(AlterTableCmd);

	cmd->subtype = subtype;
	cmd->name = pstrdup(column);
	cmd->def = (Node *) options;
	return cmd;
}

/*
 * The provider's check of a new label, which also applies it: the column's
 * options are set (or reset) to what the label says.
 */
static void
column_label_check(const ObjectAddress *object, const char *label)
{
	char	   *column;
	char	   *current;
	char	   *toaster;
	char	   *options;
	List	   *cmds;

	if (object->classId != RelationRelationId || object->objectSubId <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("security labels of provider \"%s\" apply to table columns only",
						JSONB_TOASTER_NAME)));

	current = label_of_column(object->objectId, object->objectSubId);
	if (same_label(label, current))
		return;

	column = get_attname(object->objectId, object->objectSubId, false);
	if (label == NULL)
	{
		cmds = list_make1(options_command(AT_ResetOptions, column,
										  list_make2(makeDefElem("toaster", NULL, -1),
													 makeDefElem("toaster_options", NULL, -1))));
	}
	else
	{
		List	   *defs;

		parse_label(label, &toaster, &options);
		defs = list_make1(makeDefElem("toaster",
									  (Node *) makeString(toaster), -1));
		if (options != NULL)
			defs = lappend(defs, makeDefElem("toaster_options",
											 (Node *) makeString(options), -1));
		/* options the label leaves out are reset */
		cmds = list_make1(options_command(AT_SetOptions, column, defs));
		if (options == NULL)
			cmds = lcons(options_command(AT_ResetOptions, column,
										 list_make1(makeDefElem("toaster_options", NULL, -1))),
						 cmds);
	}
	/*
	 * This relation only: a label belongs to one relation's column.  The
	 * running command is a SECURITY LABEL, which event triggers collect as
	 * such; the ALTER TABLE run for it is not a command of its own.
	 */
	EventTriggerInhibitCommandCollection();
	PG_TRY();
	{
		AlterTableInternal(object->objectId, cmds, false);
	}
	PG_FINALLY();
	{
		EventTriggerUndoInhibitCommandCollection();
	}
	PG_END_TRY();
}

/* Make the column's label say what its options say. */
static void
sync_label(Oid relid, const char *column)
{
	AttrNumber	attnum = get_attnum(relid, column);
	ObjectAddress address;
	char	   *label;
	char	   *current;

	if (attnum <= 0)
		return;
	ObjectAddressSubSet(address, RelationRelationId, relid, attnum);
	label = label_of_column(relid, attnum);
	current = GetSecurityLabel(&address, JSONB_TOASTER_NAME);
	if (same_label(label, current))
		return;
	SetSecurityLabel(&address, JSONB_TOASTER_NAME, label);
}

static bool
names_toaster_option(const AlterTableCmd *cmd)
{
	ListCell   *lc;

	if (cmd->subtype != AT_SetOptions && cmd->subtype != AT_ResetOptions)
		return false;
	foreach(lc, castNode(List, cmd->def))
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (def->defnamespace == NULL &&
			(strcmp(def->defname, "toaster") == 0 ||
			 strcmp(def->defname, "toaster_options") == 0))
			return true;
	}
	return false;
}

/* After an ALTER TABLE that set or reset a toaster option: the labels */
static void
sync_labels_after(AlterTableStmt *stmt)
{
	Oid			relid;
	List	   *relids;
	ListCell   *lc;

	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	/* whatever the command did to the inheritors, their labels follow */
	relids = stmt->relation->inh ?
		find_all_inheritors(relid, NoLock, NULL) : list_make1_oid(relid);
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);
		ListCell   *rc;

		if (!names_toaster_option(cmd))
			continue;
		foreach(rc, relids)
			sync_label(lfirst_oid(rc), cmd->name);
	}
}

static void
column_label_process_utility(PlannedStmt *pstmt, const char *queryString,
							 bool readOnlyTree, ProcessUtilityContext context,
							 ParamListInfo params, QueryEnvironment *queryEnv,
							 DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (IsA(parsetree, AlterTableStmt))
		sync_labels_after((AlterTableStmt *) parsetree);
}

void
jt_column_label_init(void)
{
	register_label_provider(JSONB_TOASTER_NAME, column_label_check);
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = column_label_process_utility;
}

#endif							/* JT_CUSTOM_TOAST */
