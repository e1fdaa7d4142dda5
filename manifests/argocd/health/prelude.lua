-- Butler health for Argo CD: base and table libraries only, as Argo CD runs custom scripts.
local function condition(t)
  local conditions = obj.status and obj.status.conditions
  if type(conditions) ~= "table" then return nil end
  for _, c in ipairs(conditions) do
    if c.type == t then return c end
  end
  return nil
end
local function message(c, fallback)
  if c ~= nil and type(c.message) == "string" and c.message ~= "" then return c.message end
  return fallback
end
hs = {}
if type(obj.status) ~= "table" then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report status"
  return hs
end
local ready = condition("Ready")
local generation = obj.metadata and obj.metadata.generation
local observed = obj.status.observedGeneration
if observed == nil and ready ~= nil then observed = ready.observedGeneration end
if generation ~= nil and observed ~= nil and observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. tostring(generation)
  return hs
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
  return hs
end
