"""Ceilometer's real Gnocchi publisher against our server, then checks.

Usage: /usr/bin/python3 ceilometer_publish.py CEILOMETER_CONF ENDPOINT

Debian's python3 on purpose: python3-ceilometer lives in its dist-packages.
Ceilometer's code runs as shipped: its prepare_service() reads the config,
the publisher is loaded through the stevedore entry point a pipeline uses,
and publish_samples() does all the HTTP. The publisher logs and swallows
errors, so any ERROR log record counts as a failure. Expected values come
from Ceilometer's own tables wherever it has them (resource types, archive
policies, metric -> archive policy), so a Ceilometer upgrade can't make the
check test something Ceilometer no longer does.
"""
import base64
import json
import logging
import re
import sys
import urllib.error
import urllib.request

from ceilometer import gnocchi_client
from ceilometer import publisher
from ceilometer import sample as ceilo_sample
from ceilometer import service

conf_file, endpoint = sys.argv[1], sys.argv[2].rstrip('/')

INSTANCE = '9b1a2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d'
IMAGE = '0c2b7a4e-3f1d-4e5a-9b8c-7d6e5f4a3b2c'
PROJECT = 'c0ffee00-0000-4000-8000-000000000001'
USER = 'c0ffee00-0000-4000-8000-000000000002'
# Not a UUID, as nova's tap names aren't: the server maps it to one, and the
# publisher relies on "original_resource_id" in the "Unknown resources"
# error to know which resource to create.
VIF = 'instance-00000001-%s-tap0a1b2c3d' % INSTANCE
# metric -> (sample type, unit, resource id)
METERS = {'cpu': ('cumulative', 'ns', INSTANCE),
          'memory.usage': ('gauge', 'MB', INSTANCE),
          'network.incoming.bytes': ('cumulative', 'B', VIF),
          'image.size': ('gauge', 'B', IMAGE)}
T = ['2024-01-01T00:%02d:00+00:00' % m for m in (0, 5, 10, 15)]
VOLUMES = {'cpu': [1e9, 4e9, 1e10, 1.6e10],  # one per T
           'memory.usage': [512, 768, 1024, 1024],
           'network.incoming.bytes': [1000, 4000, 7000, 13000],
           'image.size': [13267968] * 4}


def fail(msg):
    print('FAILED: ' + msg)
    sys.exit(1)


def expect(what, got, want):
    if got != want:
        fail('%s:\n  got    %r\n  wanted %r' % (what, got, want))
    print('ok: %s' % what)


def get(path):
    req = urllib.request.Request(endpoint + path, headers={
        'Authorization': 'Basic ' + base64.b64encode(b'admin:').decode()})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        fail('GET %s -> %s %s' % (path, e.code, e.read().decode()[:500]))


class ErrorRecorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(self.format(record))


def samples(first, display_name, flavor, volumes):
    """Samples at T[first] and T[first+1]: five minutes apart, so each lands
    in its own point of Ceilometer's 5-minute archive policies."""
    # Shaped like nova/libvirt pollster metadata; the publisher maps it to
    # resource attributes through gnocchi_resources.yaml.
    meta = {'display_name': display_name, 'host': 'compute-1',
            'image_ref': IMAGE, 'launched_at': '2024-01-01T00:00:00.000000',
            'flavor': {'id': flavor[0], 'name': flavor[1]},
            'instance_id': INSTANCE, 'vnic_name': 'tap0a1b2c3d',
            'name': 'cirros', 'container_format': 'bare',
            'disk_format': 'qcow2'}
    return [ceilo_sample.Sample(
        name=name, type=typ, unit=unit, volume=volumes[name][first + i],
        user_id=USER, project_id=PROJECT, resource_id=rid,
        timestamp=T[first + i], resource_metadata=meta)
        for i in range(2) for name, (typ, unit, rid) in METERS.items()]


def seconds(span):
    """'5 minutes' (Ceilometer's yaml) or '30 days, 0:05:00' (Gnocchi)."""
    m = re.fullmatch(r'(?:(\d+) days?, )?(\d+):(\d\d):(\d\d)', span)
    if m:
        d, h, mi, s = (int(x or 0) for x in m.groups())
        return ((d * 24 + h) * 60 + mi) * 60 + s
    n, unit = span.split()
    return int(n) * {'second': 1, 'minute': 60, 'hour': 3600,
                     'day': 86400}[unit.rstrip('s')]


# -- what ceilometer-upgrade (run just before) must have created ----------
want_types = {n: dict(a) for n, a in gnocchi_client.resources_initial.items()}
for op in gnocchi_client.resources_update_operations:
    if op['type'] == 'create_resource_type':
        want_types[op['resource_type']] = dict(op['data'][0]['attributes'])
    else:
        for patch in op['data']:
            want_types[op['resource_type']][
                patch['path'].split('/')[-1]] = patch['value']
for name, attrs in sorted(want_types.items()):
    got = get('/v1/resource_type/' + name)
    # Gnocchi does not echo an attribute's "options" (the fill value).
    expect('resource type %s' % name, (got['state'], got['attributes']),
           ('active', {a: {k: v for k, v in spec.items() if k != 'options'}
                       for a, spec in attrs.items()}))

# -- publish twice through Ceilometer's publisher --------------------------
conf = service.prepare_service(argv=['ceilometer', '--config-file', conf_file])
errors = ErrorRecorder()
logging.getLogger().addHandler(errors)
# filter_project stays at its default ("service"): the publisher looks it up
# once in "Keystone", which here is the Gnocchi endpoint itself (the
# gnocchi-basic plugin has a single endpoint); its 404 makes the publisher
# log a warning and drop the filter, as it would without that project.
pub = publisher.get_publisher(conf, 'gnocchi://?timeout=30',
                              'ceilometer.sample.publisher')

# The first publish creates the archive policies, the resources (on
# "Unknown resources") and their metrics, then PATCHes the same attributes
# (no new revision). The second renames the instance and changes its
# flavor, which the publisher sends as a PATCH: a new revision.
pub.publish_samples(samples(0, 'vm-1', ('1', 'm1.small'), VOLUMES))
if errors.records:
    fail('first publish logged errors:\n' + '\n'.join(errors.records))
print('ok: publish 1 (creates policies, resources, metrics)')
pub.publish_samples(samples(2, 'vm-1-renamed', ('2', 'm1.medium'), VOLUMES))
if errors.records:
    fail('second publish logged errors:\n' + '\n'.join(errors.records))
print('ok: publish 2 (updates instance attributes)')

# -- read everything back --------------------------------------------------
for ap in pub.archive_policies_definition:
    got = get('/v1/archive_policy/' + ap['name'])
    expect('archive policy %s' % ap['name'],
           (sorted(got['aggregation_methods']), got['back_window'],
            [(seconds(d['granularity']), seconds(d['timespan']))
             for d in got['definition']]),
           (sorted(ap['aggregation_methods']), ap['back_window'],
            [(seconds(d['granularity']), seconds(d['timespan']))
             for d in ap['definition']]))

common = {'user_id': USER, 'project_id': PROJECT, 'ended_at': None}
resources = {  # type: id as Ceilometer sends it, attributes, metrics
    'instance': (INSTANCE, dict(
        common, display_name='vm-1-renamed', host='compute-1',
        image_ref=IMAGE, flavor_id='2', flavor_name='m1.medium',
        launched_at='2024-01-01T00:00:00+00:00', server_group=None),
        ['cpu', 'memory.usage']),
    'instance_network_interface': (VIF, dict(
        common, name='tap0a1b2c3d', instance_id=INSTANCE),
        ['network.incoming.bytes']),
    'image': (IMAGE, dict(
        common, name='cirros', container_format='bare', disk_format='qcow2'),
        ['image.size']),
}
expect('resources created (no duplicates)',
       sorted((r['type'], r['original_resource_id'])
              for r in get('/v1/resource/generic')),
       sorted((t, rid) for t, (rid, _, _) in resources.items()))

for rtype, (rid, attrs, metrics) in resources.items():
    path = '/v1/resource/%s/%s' % (rtype, rid)
    res = get(path)
    expect('%s attributes' % rtype,
           dict({k: res.get(k) for k in attrs}, type=res['type'],
                original_resource_id=res['original_resource_id']),
           dict(attrs, type=rtype, original_resource_id=rid))
    expect('%s metrics' % rtype, sorted(res['metrics']), sorted(metrics))
    for name in metrics:
        metric = get('/v1/metric/' + res['metrics'][name])
        # The policy is the one Ceilometer chose for this meter. A single
        # metric's read embeds its (generic) resource, as Gnocchi's does.
        expect('%s archive policy and unit' % name,
               (metric['archive_policy']['name'], metric['unit'],
                (metric['resource'] or {}).get('id')),
               (pub.metric_map[name].metrics[name]['archive_policy_name'],
                METERS[name][1], res['id']))
        expect('%s measures' % name,
               get(path + '/metric/%s/measures?refresh=true' % name),
               [[t, 300.0, float(v)] for t, v in zip(T, VOLUMES[name])])
    if rtype != 'instance':
        # Ceilometer PATCHed unchanged attributes after creating it.
        expect('%s history (unchanged PATCH, one revision)' % rtype,
               len(get(path + '/history')), 1)

# The rate Ceilometer's "-rate" policy exists for (what dashboards chart).
expect('cpu rate:mean',
       get('/v1/resource/instance/%s/metric/cpu/measures'
           '?refresh=true&aggregation=rate:mean' % INSTANCE),
       [[T[1], 300.0, 3e9], [T[2], 300.0, 6e9], [T[3], 300.0, 6e9]])

history = get('/v1/resource/instance/%s/history' % INSTANCE)
expect('instance history (old then new attributes)',
       [(h['display_name'], h['flavor_id'], h['flavor_name'],
         h['revision_end'] is None) for h in history],
       [('vm-1', '1', 'm1.small', False), ('vm-1-renamed', '2', 'm1.medium',
                                           True)])
expect('instance revisions are contiguous',
       history[0]['revision_end'], history[1]['revision_start'])
