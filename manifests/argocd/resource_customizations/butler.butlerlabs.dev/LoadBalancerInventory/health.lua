-- Butler health for Argo CD: base and table libraries only, as Argo CD runs custom scripts.
-- An inventory is data written by the reporter: Degraded while the reporter cannot read the tenant (observedAt
-- then ages and the TenantCluster reports DemandUnknown); its freshness is judged by the TenantCluster.
hs = {}
local spec = obj.spec
if type(spec) ~= "table" or spec.observedAt == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the reporter"
  return hs
end
if type(obj.status) == "table" and type(obj.status.conditions) == "table" then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Reporting" and c.status == "False" then
      hs.status = "Degraded"
      hs.message = tostring(c.reason) .. ": " .. tostring(c.message)
      return hs
    end
  end
end
local count = 0
if type(spec.services) == "table" then count = #spec.services end
hs.status = "Healthy"
hs.message = tostring(count) .. " LoadBalancer Service(s) observed at " .. tostring(spec.observedAt)
return hs
