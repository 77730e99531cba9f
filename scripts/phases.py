import glob,sys,statistics as st,os,csv
def load(d):
    t={}
    for f in ('stderr.txt','harness.trace'):
        for l in open(os.path.join(d,f)):
            if l.startswith('# trace '):
                _,_,ph,v=l.split(); t[ph]=float(v)
    return t
for mode in sys.argv[1:]:
    rows=[]
    for d in glob.glob(f'{mode}/threads_1_512/*/points/*'):
        t=load(d)
        if 'go' not in t: continue
        rows.append(t)
    rows.sort(key=lambda t:t['go'])
    def med(f):
        v=[f(t) for t in rows]
        v=[x for x in v if x is not None]
        return f"{st.median(v)*1e3:7.1f} ms (p90 {sorted(v)[int(.9*len(v))]*1e3:6.1f})"
    print(mode, len(rows))
    print(' init main->context   ', med(lambda t:t['context']-t['main']))
    print(' ready before go (gate wait)', med(lambda t:t['go']-t['context']))
    print(' go->gate passed      ', med(lambda t:t['gate']-t['go']))
    print(' gate->last metric    ', med(lambda t:t['global_half_grid']-t['gate']))
    print(' last metric->exit    ', med(lambda t:t['exit']-t['global_half_grid']))
    print(' exit->reaped         ', med(lambda t:t['reaped']-t['exit']))
    print(' go->reaped (run_s)   ', med(lambda t:t['reaped']-t['go']))
    print(' reaped->next go      ', med(lambda t:None))if False else None
