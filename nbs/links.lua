-- Links that work where a page is read.
--
-- Pages link to each other by their sources (`05a_pool.ipynb`, `explanations/formats.qmd`), which Quarto turns
-- into the site's .html pages; nbdev links names in backticks to the site's own address (`site-url` in
-- nbdev.yml), which nothing publishes yet. So, in a build of the site, a link to that address leads to the page
-- in this build instead; and in README.md (this site's home page rendered to GitHub Markdown, and read at the
-- top of a clone or on GitHub, where no site is built) every link to a page leads to its source under nbs/,
-- which GitHub renders and any editor opens.

local dir = quarto.project.directory

local function site_url()
  local f = io.open(pandoc.path.join({dir, 'nbdev.yml'}))
  if not f then return nil end
  local url = f:read('a'):match('site%-url:%s*"?([^"\n]+)"?')
  f:close()
  return url and (url:gsub('/*$', '') .. '/')
end
local site = site_url()

-- page ('pool', 'explanations/formats') -> source ('05a_pool.ipynb', 'explanations/formats.qmd'); nbdev names a
-- notebook's page after it without its number
local sources = {}
for _, sub in ipairs({'', 'explanations'}) do
  local ok, names = pcall(pandoc.system.list_directory, sub == '' and dir or pandoc.path.join({dir, sub}))
  for _, name in ipairs(ok and names or {}) do
    local stem, ext = name:match('^(.-)%.(%a+)$')
    if stem and (ext == 'ipynb' or ext == 'qmd') then
      local page = stem:gsub('^%d+%w-_', '')
      sources[(sub == '' and '' or sub .. '/') .. page] = (sub == '' and '' or sub .. '/') .. name
    end
  end
end

local function split(target) -- 'a/b.html#x' -> 'a/b.html', '#x'
  local path, anchor = target:match('^([^#]*)(#.*)$')
  return path or target, anchor or ''
end

local function readme_target(target)
  local path, anchor = split(target)
  if site and path:sub(1, #site) == site then
    local src = sources[path:sub(#site + 1):gsub('%.html$', '')]
    return src and ('nbs/' .. src .. anchor) or target
  end
  if path == '' or path:match('^%a[%w+.-]*:') or path:sub(1, 1) == '/' then return target end
  local page = path:gsub('%.html$', '')
  return 'nbs/' .. (sources[page] or path) .. anchor
end

local function site_target(target)
  local path, anchor = split(target)
  if not (site and path:sub(1, #site) == site) then return target end
  local here = quarto.doc.input_file:sub(#dir + 2)
  local _, depth = here:gsub('/', '')
  return string.rep('../', depth) .. path:sub(#site + 1) .. anchor
end

function Link(el)
  if quarto.doc.is_format('gfm') then el.target = readme_target(el.target)
  elseif quarto.doc.is_format('html') then el.target = site_target(el.target) end
  return el
end
