import type { Topology } from "@geo/core";
import type { RegionPools } from "../executor/region-pools.js";
import type { Logger } from "../log.js";
import type { Fact } from "../observability/alert-book.js";

/**
 * The sequences owned by columns of the configured geo-partitioned tables (serial and identity
 * columns: pg_depend's auto and internal dependencies), with each one's step and start.
 */
const OWNED_SEQUENCES_SQL = `SELECT n.nspname, t.relname, a.attname, s.seqincrement, s.seqstart
  FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_sequence s ON s.seqrelid = d.objid
  JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
  JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
  JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
  WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
    AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
    AND d.deptype IN ('a', 'i')
  ORDER BY 1, 2, 3`;

/**
 * Checked at start, in every region that answers: a geo-partitioned table whose column takes ids
 * from a sequence gets the same ids in every region (each has its own copy of the sequence),
 * unless its ids are striped, and then each region's sequence must step by the number of regions
 * from its own place (docs/ids.md). Each column found otherwise is a `sequence_ids_collide` alert
 * (subject `region/table.column`) and a warning in the log, so a sequence made directly on a
 * server, before the table was configured, or before a region was added, is not silent. A region
 * down at start is read when it answers again (server/late-regions.ts).
 */
export class SequenceIds {
  #facts: Fact[] = [];

  constructor(
    private readonly topology: Topology,
    private readonly pools: RegionPools,
    private readonly log: Logger,
  ) {}

  /** Reads the sequences of `regions`, replacing what was known of those regions. */
  async check(regions: readonly string[], timeoutMs: number): Promise<void> {
    const facts: Fact[] = [];
    const order = this.topology.regions.map((region) => region.id);
    await Promise.all(
      regions.map(async (id) => {
        const region = this.topology.region(id);
        if (region === undefined) return;
        let rows: (string | null)[][];
        try {
          const lease = await this.pools.acquire(id, region.primary.user ?? "postgres");
          try {
            rows = (await lease.connection.simpleQuery(OWNED_SEQUENCES_SQL, { timeoutMs })).rows;
          } finally {
            lease.release();
          }
        } catch (error) {
          this.log.warn({ region: id, err: error }, "could not read the region's sequences to check ids");
          return;
        }
        for (const [schema, table, column, step, start] of rows) {
          const policy = this.policyOf(schema ?? "", table ?? "");
          if (policy === undefined) continue;
          const name = `${policy.table}.${column}`;
          const place = order.indexOf(id) + 1;
          let message: string | undefined;
          if (policy.ids !== "striped")
            message = `column ${name} of geo-partitioned table ${policy.table} takes ids from a sequence in ${id}: every region's copy hands out the same ids (set ids = "striped" and run RESTRIPE ${policy.table}, or use uuid ids; docs/ids.md)`;
          else if (Number(step) !== order.length || Number(start) !== place)
            message = `the sequence of ${name} in ${id} steps by ${step} from ${start}, not by ${order.length} from ${place}: its ids may collide with another region's (run RESTRIPE ${policy.table}; docs/ids.md)`;
          if (message === undefined) continue;
          this.log.warn({ region: id, table: policy.table, column }, message);
          facts.push({ name: "sequence_ids_collide", subject: `${id}/${name}`, message });
        }
      }),
    );
    // The regions read replace what was known of them; the others' facts stand.
    const kept = this.#facts.filter(
      (fact) => !regions.includes(fact.subject.slice(0, fact.subject.indexOf("/"))),
    );
    this.#facts = [...kept, ...facts].sort((a, b) =>
      a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0,
    );
  }

  facts(): Fact[] {
    return this.#facts;
  }

  private policyOf(schema: string, table: string) {
    const policy =
      this.topology.tables.get(`${schema}.${table}`) ??
      (schema === "public" ? this.topology.tables.get(table) : undefined);
    return policy?.placement === "geo_partitioned" ? policy : undefined;
  }
}
