/*-------------------------------------------------------------------------
 *
 * uninstall.c
 *	  Leaving the toaster: converting a column back to standard storage, and
 *	  refusing DROP EXTENSION while columns still use the toaster.
 *
 * Values the toasters stored (the jsonb toaster's skeletons, the appendable
 * bytea toaster's values) can be read only by this library.  A column
 * leaves its toaster with jsonb_toaster_convert_column(), which resets the
 * column's option and rewrites every value the toaster still holds into
 * standard TOAST.  DROP EXTENSION is refused while any column of the
 * database names the toaster, so that the usual way out (drop the
 * extension, then take the library out of shared_preload_libraries) cannot
 * leave values nobody can read.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/uninstall.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "admin/uninstall.h"

#ifdef JT_CUSTOM_TOAST

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bytea/bytea_pointer.h"
#include "support/names.h"

/* Columns named in the DROP EXTENSION error; the count covers the rest */
#define JT_MAX_COLUMNS_LISTED	10

static object_access_hook_type prev_object_access_hook = NULL;

/* This transaction dropped the extension: check at commit */
static bool extension_dropped = false;

/*
 * The toaster of ours that can hold values of a column of this type, or
 * NULL: the toasters decline other types.
 */
static const char *
toaster_for_type(Oid typid)
{
	if (typid == JSONBOID)
		return JSONB_TOASTER_NAME;
	if (typid == BYTEAOID)
		return BYTEA_TOASTER_NAME;
	return NULL;
}

/*
 * Does this attoptions array name toaster?  Core compares toaster names
 * without regard to case.
 */
static bool
options_name_toaster(Datum attoptions, const char *toaster)
{
	List	   *options = untransformRelOptions(attoptions);

	foreach_node(DefElem, opt, options)
	{
		if (strcmp(opt->defname, "toaster") == 0 &&
			pg_strcasecmp(defGetString(opt), toaster) == 0)
			return true;
	}
	return false;
}

static int
compare_names(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

/*
 * Raise an ERROR naming the columns of the current database whose option
 * names the toaster of their type (jsonb, bytea), if there are any.  Other
 * types never hold our values (the toasters decline them), and other
 * sessions' temporary tables go with their sessions.
 */
static void
refuse_while_columns_use_toaster(void)
{
	Relation	attrel;
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *columns = NIL;
	StringInfoData listed;
	int			n;

	attrel = table_open(AttributeRelationId, AccessShareLock);
	scan = systable_beginscan(attrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(tuple);
		Datum		attoptions;
		bool		isnull;
		Oid			nspid;
		char	   *relname;

		if (att->attnum <= 0 || att->attisdropped ||
			toaster_for_type(att->atttypid) == NULL ||
			IsCatalogRelationOid(att->attrelid))
			continue;
		attoptions = heap_getattr(tuple, Anum_pg_attribute_attoptions,
								  RelationGetDescr(attrel), &isnull);
		if (isnull ||
			!options_name_toaster(attoptions, toaster_for_type(att->atttypid)))
			continue;
		nspid = get_rel_namespace(att->attrelid);
		relname = get_rel_name(att->attrelid);
		if (relname == NULL || isOtherTempNamespace(nspid))
			continue;
		columns = lappend(columns,
						  psprintf("%s.%s",
								   quote_qualified_identifier(get_namespace_name(nspid),
															  relname),
								   quote_identifier(NameStr(att->attname))));
	}
	systable_endscan(scan);
	table_close(attrel, AccessShareLock);

	if (columns == NIL)
		return;

	/* name the first few in a stable order */
	list_sort(columns, compare_names);
	initStringInfo(&listed);
	n = 0;
	foreach_ptr(char, name, columns)
	{
		if (n == JT_MAX_COLUMNS_LISTED)
		{
			appendStringInfo(&listed, " and %d more",
							 list_length(columns) - JT_MAX_COLUMNS_LISTED);
			break;
		}
		appendStringInfo(&listed, "%s%s", n++ > 0 ? ", " : "", name);
	}
	ereport(ERROR,
			(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
			 errmsg("cannot drop extension jsonb_toaster because columns use its toaster"),
			 errdetail_plural("%d column stores its values with jsonb_toaster: %s.",
							  "%d columns store their values with jsonb_toaster: %s.",
							  list_length(columns), list_length(columns), listed.data),
			 errhint("Convert the columns of tables back to standard storage with jsonb_toaster_convert_column(); for a materialized view, reset the option and refresh it.  Then drop the extension.")));
}

/*
 * The check is made when the transaction commits, not when the extension
 * is dropped: a DROP SCHEMA .. CASCADE may drop the extension before the
 * tables it drops too, and a transaction may drop the tables afterwards.
 */
static void
jt_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == ExtensionRelationId &&
		objectId == get_extension_oid(JSONB_TOASTER_NAME, true))
		extension_dropped = true;
}

static void
jt_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (extension_dropped)
			{
				extension_dropped = false;
				/* not if it was created again, or the drop rolled back */
				if (!OidIsValid(get_extension_oid(JSONB_TOASTER_NAME, true)))
					refuse_while_columns_use_toaster();
			}
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			extension_dropped = false;
			break;
		default:
			break;
	}
}

void
jt_uninstall_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = jt_object_access;
	RegisterXactCallback(jt_xact_callback, NULL);
}

/* Run one SQL command through SPI; returns the number of rows processed. */
static uint64
run_command(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "unexpected result %s of \"%s\"",
			 SPI_result_code_string(rc), sql);
	return SPI_processed;
}

static char *
qualified_relation_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* relhasrules may stay set after the last rule is dropped: ask the relcache */
static bool
has_rules(Oid relid)
{
	Relation	rel = relation_open(relid, NoLock);
	bool		result = rel->rd_rules != NULL;

	relation_close(rel, NoLock);
	return result;
}

/*
 * The checks of the relation itself, which need no lock: it is a table,
 * the user owns it, and it is not a system catalog.  They are made before
 * any lock is taken, as RangeVarGetRelidExtended()'s callbacks do, so that
 * a user without rights on a table cannot queue an ExclusiveLock behind its
 * writers and block every later one; and again under the lock.  Returns
 * the pg_class tuple (the caller releases it), or NULL if missing_ok and
 * the relation is gone.
 */
static HeapTuple
check_relation(Oid relid, bool missing_ok)
{
	HeapTuple	tuple;
	Form_pg_class classform;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
	{
		if (missing_ok)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	}
	classform = (Form_pg_class) GETSTRUCT(tuple);
	if (classform->relkind != RELKIND_RELATION &&
		classform->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot convert a column of relation \"%s\"",
						NameStr(classform->relname)),
				 errdetail_relkind_not_supported(classform->relkind),
				 classform->relkind == RELKIND_MATVIEW ?
				 errhint("Reset the column's toaster option and refresh the materialized view.") : 0));
	if (!object_ownercheck(RelationRelationId, relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(classform->relkind),
					   NameStr(classform->relname));
	if (IsSystemClass(relid, classform))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied: \"%s\" is a system catalog",
						NameStr(classform->relname))));
	return tuple;
}

/*
 * Checks on one table of the hierarchy being converted (locked): those of
 * check_relation(), no rules (an UPDATE there would be rewritten), the
 * column is jsonb or bytea.  Returns the table's owner.
 */
static Oid
check_member(Oid relid, const char *colname)
{
	HeapTuple	tuple;
	Form_pg_class classform;
	AttrNumber	attnum;
	Oid			owner;

	tuple = check_relation(relid, false);
	classform = (Form_pg_class) GETSTRUCT(tuple);
	if (has_rules(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert a column of table \"%s\" because it has rules",
						NameStr(classform->relname)),
				 errdetail("The conversion updates the table's rows, and rules would rewrite those updates.")));
	owner = classform->relowner;
	ReleaseSysCache(tuple);

	attnum = get_attnum(relid, colname);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						colname, get_rel_name(relid))));
	if (toaster_for_type(get_atttype(relid, attnum)) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is neither of type jsonb nor of type bytea",
						colname, get_rel_name(relid))));
	return owner;
}

/*
 * A stored generated column is computed again only when a column it uses
 * is updated: the SET list that updates every ordinary column to itself.
 */
static char *
recompute_generated(Oid relid)
{
	Relation	rel = relation_open(relid, NoLock);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	StringInfoData set;

	initStringInfo(&set);
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *name = quote_identifier(NameStr(att->attname));

		if (att->attisdropped || att->attgenerated != '\0' ||
			att->attidentity == ATTRIBUTE_IDENTITY_ALWAYS)
			continue;
		appendStringInfo(&set, "%s%s = %s", set.len > 0 ? ", " : "", name, name);
	}
	relation_close(rel, NoLock);
	if (set.len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert generated column of relation \"%s\"",
						get_rel_name(relid)),
				 errdetail("The table has no ordinary column whose update would compute it again.")));
	return set.data;
}

/*
 * Reset the option on every table of the hierarchy, rewrite the rows that
 * hold values of the toaster (skeletons, appendable bytea values), and
 * check that none is left.  Runs as the table's owner
 * with a safe search_path and row security off (an error, not a partial
 * conversion, if a policy would hide rows).  Returns the rows rewritten.
 */
static uint64
convert_as_owner(Oid relid, List *members, const char *colname)
{
	const char *column = quote_identifier(colname);
	const char *schema;
	const char *is_ours;
	const char *standard;
	const char *qualified = qualified_relation_name(relid);
	AttrNumber	attnum = get_attnum(relid, colname);
	uint64		converted;
	uint64		left;

	schema = quote_identifier(get_namespace_name(get_extension_schema(get_extension_oid(JSONB_TOASTER_NAME, false))));
	if (get_atttype(relid, attnum) == BYTEAOID)
	{
		is_ours = psprintf("(%s.bytea_appendable_storage(%s)).form OPERATOR(pg_catalog.=) 'appendable'",
							   schema, column);
		standard = psprintf("%s = %s.bytea_appendable_standard(%s)",
							column, schema, column);
	}
	else
	{
		is_ours = psprintf("(%s.jsonb_toaster_storage(%s)).form OPERATOR(pg_catalog.=) 'skeleton'",
							   schema, column);
		standard = psprintf("%s = %s.jsonb_toaster_standard(%s)",
							column, schema, column);
	}

	SPI_connect();
	foreach_oid(member, members)
		run_command(psprintf("ALTER TABLE ONLY %s ALTER COLUMN %s RESET (toaster)",
							 qualified_relation_name(member), column),
					SPI_OK_UTILITY);
	converted = run_command(psprintf("UPDATE %s SET %s WHERE %s",
									 qualified,
									 get_attgenerated(relid, attnum) != '\0' ?
									 recompute_generated(relid) : standard,
									 is_ours),
							SPI_OK_UPDATE);
	run_command(psprintf("SELECT 1 FROM %s WHERE %s", qualified, is_ours),
				SPI_OK_SELECT);
	left = SPI_processed;
	SPI_finish();

	if (left > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not convert every value of column \"%s\" of relation \"%s\"",
						colname, get_rel_name(relid)),
				 errdetail_plural("%llu row still holds a value of the toaster after the update.",
								  "%llu rows still hold values of the toaster after the update.",
								  left, (unsigned long long) left),
				 errhint("A trigger may have skipped or changed the update of those rows.")));
	return converted;
}

#endif							/* JT_CUSTOM_TOAST */

/*
 * jsonb_toaster_convert_column(rel regclass, col name) returns bigint
 *
 * Take a column out of its toaster: reset its "toaster" option on the table
 * and its partitions or children, and store every value the toaster still
 * holds (a jsonb skeleton, an appendable bytea value) again with standard
 * TOAST.  Returns the number of rows
 * rewritten.  The rows are rewritten by an UPDATE in the caller's
 * transaction, run as the table's owner, so row triggers fire and the old
 * versions are left for VACUUM.  The tables are locked against writes
 * meanwhile: a concurrent writer could otherwise store new skeletons under
 * the old option.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_convert_column);
Datum
jsonb_toaster_convert_column(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	List	   *members;
	Oid			owner;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	uint64		converted;

	/*
	 * With one snapshot for the whole transaction, rows committed by others
	 * after it was taken could be neither seen nor converted.
	 */
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("jsonb_toaster_convert_column() cannot run in a REPEATABLE READ or SERIALIZABLE transaction"),
				 errhint("Run it in a READ COMMITTED transaction.")));

	/*
	 * Check the rights on the table, then lock it, then check everything
	 * again so that the checks hold until the end.  With the table locked no
	 * child can be added; the children's rights are checked before they are
	 * locked too, like the table's.
	 */
	ReleaseSysCache(check_relation(relid, false));
	LockRelationOid(relid, ExclusiveLock);
	owner = check_member(relid, colname);
	members = find_all_inheritors(relid, NoLock, NULL);
	foreach_oid(member, members)
	{
		HeapTuple	tuple = check_relation(member, true);

		if (tuple != NULL)
			ReleaseSysCache(tuple);
	}
	members = find_all_inheritors(relid, ExclusiveLock, NULL);
	foreach_oid(member, members)
		check_member(member, colname);

	/* like VACUUM: the owner's triggers and expressions run as the owner */
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
	RestrictSearchPath();
	(void) set_config_option("row_security", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	converted = convert_as_owner(relid, members, colname);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);

	PG_RETURN_INT64((int64) converted);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jsonb_toaster_convert_column() needs a server with the custom TOAST hooks"),
			 errdetail("This server cannot store values with the toaster, so there is nothing to convert.")));
	PG_RETURN_NULL();
#endif
}

/*
 * jsonb_toaster_standard(jsonb) returns jsonb
 *
 * The value as an ordinary jsonb in memory, however it is stored: storing
 * the result in a column that does not use the toaster gives it standard
 * storage.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_standard);
Datum
jsonb_toaster_standard(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}
