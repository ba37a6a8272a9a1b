import { ServicesFileError, type ServicesFile, type ServiceDefinition } from "./services-file.ts";

/**
 * The services to start for `targets` (all of them when empty), dependencies first: each
 * service comes after everything it depends on. An unknown name or a dependency cycle is
 * an error naming it.
 */
export function startOrder(file: ServicesFile, targets: string[]): ServiceDefinition[] {
  const order: ServiceDefinition[] = [];
  const done = new Set<string>();
  const visiting: string[] = [];
  const visit = (name: string, neededBy: string | null) => {
    if (done.has(name)) return;
    const service = file.services.get(name);
    if (!service) {
      const known = [...file.services.keys()].join(", ");
      throw new ServicesFileError(
        neededBy === null
          ? `unknown service '${name}' (${file.path} declares: ${known})`
          : `service '${neededBy}' depends on unknown service '${name}' (${file.path} declares: ${known})`,
      );
    }
    const at = visiting.indexOf(name);
    if (at !== -1) throw new ServicesFileError(`dependency cycle in ${file.path}: ${[...visiting.slice(at), name].join(" -> ")}`);
    visiting.push(name);
    for (const dep of service.depends_on ?? []) visit(dep, name);
    visiting.pop();
    done.add(name);
    order.push(service);
  };
  for (const name of targets.length ? targets : [...file.services.keys()]) visit(name, null);
  return order;
}

/**
 * The services to stop for `targets` (all when empty), dependants first: the reverse of the
 * start order, plus every declared service that depends on a stopped one (stopping a
 * database stops the web server that needs it).
 */
export function stopOrder(file: ServicesFile, targets: string[]): ServiceDefinition[] {
  const all = startOrder(file, []);
  if (targets.length === 0) return all.reverse();
  for (const t of targets) startOrder(file, [t]); // unknown names are errors
  const stopping = new Set(targets);
  // The start order has dependencies first, so one pass finds every transitive dependant.
  for (const s of all) if ((s.depends_on ?? []).some((d) => stopping.has(d))) stopping.add(s.name);
  return all.filter((s) => stopping.has(s.name)).reverse();
}
